// KernelProblem: a kernel file (kernel_file.hpp) bound to one problem size and one device. It is
// what a kernel-file template stands on: the canonical workload key, flops and bytes, each
// argument's element count or scalar value, the search space with the file's rules evaluated for
// these extents and device limits, and for one config its -D defines, its entry and its launch.
//
// Binding checks everything that needs the extents: counts (at least 1, at most kMaxTensorBytes a
// buffer), scalar values against their dtype, expected files' sizes, the reference's launch. Each
// failure is a std::invalid_argument naming the file and the field: "t.toml: args[1].count: ...".
//
// Semantics of the launch (OpenCL): for a config, every global and local size must be a positive
// integer (`/` is exact, so "N / WPT" with WPT not dividing N is no size), local must divide
// global in every dimension, and the work-group must fit max_work_group_size and
// max_work_item_size_d where the device reports them. A grid/block launch (CUDA's, in Kernel
// Tuner's terms) has no divisibility rule, since its grid counts blocks: its sizes must be
// positive integers, the block must fit the device's threads per block (in all and per
// dimension), and shared_memory must be a whole number of bytes from 0 to the device's limit.
// The space holds this as one more constraint, so every valid config has a launch and launch()
// throws only for invalid ones.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_file.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels {

// One argument evaluated for a problem, in kernel-argument order.
struct BoundArg {
  std::string name;
  KernelArg::Kind kind = KernelArg::Kind::kBuffer;
  DataType dtype = DataType::kF32;
  std::int64_t count = 0;  // buffers: elements
  std::int64_t bytes = 0;  // buffers: count * the dtype's size
  double value = 0;        // scalars; an integer (exact) for integer dtypes, within their range
  std::optional<BufferInit> init;
  bool is_output = false;
  std::filesystem::path data;  // the initial values' file, or empty
  bool is_buffer() const { return kind == KernelArg::Kind::kBuffer; }
};

// An NDRange: sizes in work-items; unused dimensions are 1. A grid/block launch
// (LaunchModel::kGridBlock) keeps the grid in `global`, in blocks, and the block in `local`, in
// threads per block, so that code that only passes sizes on serves both models.
struct LaunchSize {
  int dimensions = 1;
  std::array<std::int64_t, 3> global{1, 1, 1};
  std::array<std::int64_t, 3> local{1, 1, 1};  // all 1 and has_local false: the runtime picks
  bool has_local = true;
  std::int64_t shared_memory_bytes = 0;  // grid/block: dynamic shared memory per block
  friend bool operator==(const LaunchSize&, const LaunchSize&) = default;
};

// A knob's value as it reaches the source: -D<name>=<value>.
struct KernelDefine {
  std::string name;
  std::string value;
  friend bool operator==(const KernelDefine&, const KernelDefine&) = default;
};

// `--shape` text ("N=1024,M=512"; spaces allowed, "" for none) over the spec's extents: all of
// the file's extents in file order, the named ones replaced. Throws std::invalid_argument
// "shape: ..." for an unknown, repeated, zero, negative or too large (kMaxKernelExtent) extent.
std::vector<Extent> resolve_extents(const KernelSpec& spec, std::string_view shape_text);

class KernelProblem {
 public:
  // Throws std::invalid_argument (file and field named) when the shape is bad, a value does not
  // evaluate, or the device is not of the spec's backend (device.kind "opencl" or "cpu").
  KernelProblem(KernelSpec spec, std::string_view shape_text, const DeviceInfo& device);

  const KernelSpec& spec() const { return spec_; }
  const std::vector<Extent>& extents() const { return extents_; }
  const std::string& workload_key() const { return workload_key_; }
  double flops() const { return flops_; }  // of one run; 0 when the file gives none
  double bytes() const { return bytes_; }
  const std::vector<BoundArg>& args() const { return args_; }
  // Knobs in file order (numbers as values knobs, strings as choice knobs), the file's rules
  // (described by their text), then the launch rule on OpenCL.
  const search_space::ConfigSpace& space() const { return space_; }

  // The config's knob values, in file order.
  std::vector<KernelDefine> defines(const search_space::Config& config) const;
  // "-DTILE=16", ... then the file's build_options: compiler tokens, for OpenCL joined by spaces.
  std::vector<std::string> build_options(const search_space::Config& config) const;
  // The entry to start for the config: the file's entry, or for a template instance
  // ("k<float, TILE>", backends with template_entries) the same with whole-token knob and extent
  // names among its arguments replaced by their values ("k<float, 16>").
  std::string entry(const search_space::Config& config) const;
  // The same for check.reference ("" when the check has no reference).
  std::string reference_entry(const search_space::Config& config) const;
  // NDRange and grid/block backends: the config's launch. Throws std::invalid_argument naming the
  // field for a config the space rejects for its launch (and std::logic_error on a cpu kernel).
  LaunchSize launch(const search_space::Config& config) const;
  // With a reference kernel (NDRange, grid/block): its launch, the same for every config.
  std::optional<LaunchSize> reference_launch() const { return reference_launch_; }

  // The values every expression is evaluated with for this config (spec().expression_names()'s
  // order): for templates that compute more from the file's expressions.
  std::vector<double> expression_values(const search_space::Config& config) const;

 private:
  struct Values;
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const;
  void bind_totals();
  void bind_args();
  void check_expected_files() const;
  void bind_reference_launch();
  void build_space();
  std::string instantiated(const std::string& entry, const search_space::Config& config) const;

  KernelSpec spec_;
  std::vector<Extent> extents_;
  std::string workload_key_;
  std::shared_ptr<const Values> values_;  // shared with the space's constraints
  double flops_ = 0;
  double bytes_ = 0;
  std::vector<BoundArg> args_;
  std::optional<LaunchSize> reference_launch_;
  search_space::ConfigSpace space_;
};

}  // namespace optune::kernels
