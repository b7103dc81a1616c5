// KernelTemplate: one schedule template of an op on a backend. It declares the knobs of its space
// for a workload and device, gives the default config (what a user gets without tuning), and emits
// the source of one candidate. Keeping all of that in one file per template (see the
// implementations in backends/<backend>/src) lets a reader see the whole template at once; the
// backends list their templates (backends/registry.hpp).
// An op may have several templates on a backend (conv2d.cpu's direct kernel, conv2d_gemm.cpu's
// GEMM): each says whether it applies to a workload and device, and the one of highest priority
// among those that apply gives the default config (oneDNN's implementation lists, AutoTVM's
// plevel). Tuning may cover every template that applies; records name the template they measured.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels {

class KernelTemplate {
 public:
  virtual ~KernelTemplate() = default;

  virtual std::string name() const = 0;  // stable, stored in records: "gemm.cpu", ...
  virtual Op op() const = 0;
  virtual std::string_view backend() const = 0;  // the backend it runs on: "cpu", ...

  // The dtypes of workloads it computes (Workload::dtype; the catalog entry says what each dtype
  // means for each operand). A workload of another dtype is not the template's.
  virtual std::vector<DataType> dtypes() const { return {DataType::kF32}; }
  // The dtypes of its inputs where they are not the workload's (kernels::operator_operands: an i8
  // GEMM on x86 reads u8 activations, as VNNI's vpdpbusd multiplies); empty: the workload's.
  virtual std::vector<DataType> input_dtypes(const Workload& /*workload*/, const DeviceInfo& /*device*/) const {
    return {};
  }

  // Whether the template has a space for the workload on the device. A template that applies
  // to every workload of its op (the default) reports what it cannot do from space() instead,
  // as an error naming the workload, so the lowest-priority template of an op should say true.
  virtual bool applies(const Workload& /*workload*/, const DeviceInfo& /*device*/) const { return true; }
  // Among the templates of an op and backend that apply, the highest priority is the default
  // (what a user gets untuned). Only the order matters; equal priorities keep the list's order.
  virtual int priority() const { return 0; }
  // Whether a stored record of `template_name` with `config` (knob values by name) was measured
  // in this template's space: its own name, and for a template split out of another, the old
  // template's records of the part that moved (so old databases read as before).
  virtual bool reads_record(std::string_view template_name, const nlohmann::json& /*config*/) const {
    return template_name == name();
  }

  virtual search_space::ConfigSpace space(const Workload& workload,
                                          const DeviceInfo& device) const = 0;
  virtual search_space::Config default_config(const Workload& workload, const DeviceInfo& device,
                                              const search_space::ConfigSpace& space) const = 0;
  // The candidate's source as its backend builds it (CPU: a C++ translation unit instantiating
  // the header a build-time consumer includes), or as people read it.
  virtual std::string emit_source(const Workload& workload, const DeviceInfo& device,
                                  const search_space::ConfigView& config) const = 0;
  // The knobs a candidate takes at run time rather than compiled in (names of space()'s knobs):
  // a config that differs from a built one only in them costs no compile, which the model-based
  // tuners use (ModelBasedTunerOptions::cheap_share).
  virtual std::vector<std::string> run_time_knobs() const { return {}; }
  // Their values as the candidate reads them, in the order its source reads them. emit_source leaves them out of the source, so configs that differ only
  // in them compile to one object (the builder reuses it: compile once, run many), and the worker
  // passes them to the loaded candidate (CPU: its optune_set_knobs). Empty: all compiled in.
  virtual std::vector<long long> run_time_knob_values(const Workload& /*workload*/, const DeviceInfo& /*device*/,
                                                      const search_space::ConfigView& /*config*/) const {
    return {};
  }

  // Features of a config that the knob values alone do not show, for the cost model: bytes moved
  // per tile, tile footprint against the caches, arithmetic intensity, register tile size, work
  // per thread, share of work wasted on edges. Names are stable; the same list for every config
  // and every shape of this template, so one model serves several shapes.
  // Build-time consumption (`optune apply-best`): how the template's tuned configs appear in a
  // generated header, one table per dtype it serves. Templates without a build-time form return none.
  struct TableForm {
    std::string include;        // header defining the row type and the dispatcher
    std::string row_type;       // e.g. "optune::kernels::cpu::TunedGemm"
    std::string config_type;    // e.g. "optune::kernels::cpu::GemmConfig"
    std::string table_name;     // e.g. "kGemm"; the default config is table_name + "Default"
    std::string default_shape;  // the shape whose default config serves untuned shapes
    // The application's call, defined after the tables in namespace optune (e.g. optune::gemm),
    // dispatching through them: the tuned config of the shape, else the default.
    std::string entry_point;
    // OpenCL: the default config is chosen at run time for each shape and device (the program is
    // compiled then anyway), so the header has no default constant, only a note of it.
    bool default_at_run_time = false;
    // The dtype of the workloads its rows serve (its entry point takes that type); records of other
    // dtypes stay out of it. A header holds a table of another dtype than f32 only where the
    // records (or the application's workloads) have that dtype, and only the table of the
    // device's default template for it (gemm_bf16.cpu's where the CPU has AVX-512 BF16, gemm.cpu's
    // widened one elsewhere: both define the same entry point).
    DataType dtype = DataType::kF32;
  };
  virtual std::vector<TableForm> table_forms() const { return {}; }
  // One row of the table: a C++ initializer of row_type for the workload and config.
  virtual std::string table_row(const Workload& /*workload*/, const DeviceInfo& /*device*/,
                                const search_space::ConfigView& /*config*/) const {
    return "";
  }
  // A row holding every shape from `low` to `high` (a leaf of a measured dispatch, optune
  // dispatch); "" where the table's rows hold one shape each (then the rule's leaf fills rows of
  // the shapes the application lists).
  virtual std::string table_range_row(const Workload& /*low*/, const Workload& /*high*/, const DeviceInfo& /*device*/,
                                      const search_space::ConfigView& /*config*/) const {
    return "";
  }
  // The config as a C++ expression of config_type (CPU templates).
  virtual std::string config_literal(const search_space::ConfigView& /*config*/) const { return ""; }

  // Compiler options of a candidate beyond the builder's own (a C++ kernel file's build_options).
  virtual std::vector<std::string> compiler_flags(const Workload& /*workload*/, const DeviceInfo& /*device*/) const {
    return {};
  }

  // What the worker must be told of the workload's operands beyond its key: a user kernel's
  // arguments and check (measure::KernelOperandsSpec's JSON); nullopt for optune's own operators,
  // whose key says it all.
  virtual std::optional<nlohmann::json> worker_operands(const Workload& /*workload*/,
                                                        const DeviceInfo& /*device*/) const {
    return std::nullopt;
  }

  virtual std::vector<std::pair<std::string, double>> derived_features(
      const Workload& /*workload*/, const DeviceInfo& /*device*/,
      const search_space::ConfigView& /*config*/) const {
    return {};
  }
};

}  // namespace optune::kernels
