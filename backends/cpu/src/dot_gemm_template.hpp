// The CPU templates on dot-product micro-kernels (gemm_int8.hpp, gemm_bf16.hpp): K packed in
// small groups that one instruction multiplies and sums into each 32-bit lane of a vector
// (vpdpbusd, vpmaddwd, vdpbf16ps), GotoBLAS blocking around them. Both kernels take the same six
// numbers (GemmInt8Config, GemmBf16Config), so their knobs, rules, default and features are one
// thing; a template says what differs: its element types, the lanes of its accumulating vector on
// the device, and the bytes a packed element takes.
// Each element type has two templates, one per op: gemm_<element>.cpu runs the GEMM, and
// conv2d_<element>.cpu an NCHW conv2d as the GEMM out[K][P*Q] = filter x im2col columns
// (conv2d_dot.hpp), tuned in the same knobs over that GEMM's extents.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/kernel_template.hpp"

namespace optune::kernels {

struct DotGemmKernel {
  std::string header;       // "gemm_int8.hpp"
  std::string function;     // "gemm_int8"
  std::string config_type;  // "GemmInt8Config"
};

// The C++ element types of a candidate's operands, by role: A and B of the GEMM, the image and the
// filter of the conv2d.
struct DotOperandTypes {
  std::string activations, weights, output;
};

// Knob names: stored in records (JSON by name), so they are a contract once released.
namespace dot_gemm_knobs {
inline constexpr const char* kTileMc = "tile_mc";
inline constexpr const char* kTileNc = "tile_nc";
inline constexpr const char* kTileKc = "tile_kc";
inline constexpr const char* kMr = "mr";
inline constexpr const char* kNr = "nr";
inline constexpr const char* kThreads = "threads";
inline constexpr const char* kPackA = "pack_a";
// What the threads share out: N's column panels, or M's row panels where N is too narrow (a
// conv2d's 7x7 layer is a GEMM of 49 columns). Records from before the knob split columns.
inline constexpr const char* kSplit = "split";
}  // namespace dot_gemm_knobs

class DotGemmTemplate : public KernelTemplate {
 public:
  explicit DotGemmTemplate(Op op) : op_(op) {}
  Op op() const override { return op_; }
  std::string_view backend() const override { return "cpu"; }
  // "gemm_int8.cpu", "conv2d_bf16.cpu".
  std::string name() const override;
  // Not to an NHWC conv2d (has_cpu_layout); other layers the conv2d cannot run are refused by space().
  bool applies(const Workload& workload, const DeviceInfo& device) const override;

  search_space::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override;
  // Untuned: 6-row micro-tiles of two accumulating vectors, MC 96, NC 512 and KC 512 where the shape
  // has them (else the nearest blocks that fit), all cores, A read in place
  // where it can be and each thread has at most 128 columns.
  search_space::Config default_config(const Workload& workload, const DeviceInfo& device,
                                      const search_space::ConfigSpace& space) const override;
  std::vector<std::pair<std::string, double>> derived_features(const Workload& workload, const DeviceInfo& device,
                                                               const search_space::ConfigView& view) const override;
  std::string emit_source(const Workload& workload, const DeviceInfo& device,
                          const search_space::ConfigView& view) const override;
  // apply-best's table of the dtype (tuned_gemm_lowp.hpp, tuned_conv2d_dot.hpp): rows of the
  // kernel's config, and the entry point optune::gemm / optune::conv2d on the dtype's elements.
  std::vector<TableForm> table_forms() const override;
  std::string table_row(const Workload& workload, const DeviceInfo& device,
                        const search_space::ConfigView& view) const override;
  std::string table_range_row(const Workload& low, const Workload& high, const DeviceInfo& device,
                              const search_space::ConfigView& view) const override;
  std::string config_literal(const search_space::ConfigView& view) const override;

 protected:
  // The GEMM the workload is: a GEMM's own extents, a conv2d's M = K, N = P * Q, K = C * R * S.
  // Throws std::invalid_argument for a conv2d the template cannot run (groups, a kept layout).
  GemmShape gemm_shape(const Workload& workload) const;

  virtual std::string element_name() const = 0;  // "int8", "bf16"
  virtual DotGemmKernel kernel() const = 0;
  // The ISA flag of the element type's AMX tiles ("amx_bf16", "amx_int8"; "" none), and the depth
  // of one of their steps (KC is a multiple): where the device has it, the space's micro-tiles
  // run on tiles (the kernel's `amx` configs: 16 or 32 rows, 16 to 48 columns, at most 8 tiles),
  // and only there: measured on a 2-core Xeon with AMX, bf16's tiles at least match its vectors
  // from M = 4 on (4 x 4096 x 4096: 62 against 51 GFLOP/s) and run 3-9x faster from M = 32.
  virtual std::string amx_isa() const { return ""; }
  virtual int amx_depth_step() const { return 0; }
  // The default config's longest depth block on tiles: the largest block up to this that cuts K
  // into blocks of equal depth, else the fewest blocks of at most this (dot_gemm_template.cpp says why).
  virtual int amx_default_kc() const { return 0; }
  bool has_amx(const DeviceInfo& device) const;
  // The 32-bit lanes of the vector the kernel accumulates in on the device: nr is a multiple.
  virtual int lanes(const DeviceInfo& device) const = 0;
  // The vector path's limit of micro-tile rows.
  virtual int max_mr(const DeviceInfo& device) const = 0;
  // The default config's micro-tile rows: 6 where 16 vector registers or more hold its
  // accumulators, else 2.
  virtual int default_mr(const Workload& workload, const DeviceInfo& device) const;
  // Bytes of one packed element (int8 widened to int16 pairs on AVX2 takes 2).
  virtual double packed_bytes(const Workload& workload, const DeviceInfo& device) const = 0;
  // Whether the kernel can read full row panels of A where they lie (pack_a off): its K groups are
  // consecutive elements of a row, and K is whole groups.
  virtual bool reads_a_in_place(const Workload& workload, const DeviceInfo& device) const = 0;
  // Knobs of the element types, added after the blocking knobs (records name knobs, not positions).
  virtual void add_type_knobs(search_space::ConfigSpace& /*space*/, const Workload& /*workload*/,
                              const DeviceInfo& /*device*/) const {}

  virtual DotOperandTypes operand_types(const search_space::ConfigView& view) const = 0;
  // Fields of the config literal that the element types set (", .a7 = true"), after the blocking's.
  virtual std::string type_fields(const search_space::ConfigView& /*view*/) const { return ""; }

 private:
  Op op_;
};

}  // namespace optune::kernels
