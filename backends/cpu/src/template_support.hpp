// What the CPU templates (gemm.cpu, the dot-product GEMMs, conv2d.cpu, depthwise_conv2d.cpu)
// share when they build a space and a default config: the device's vector unit, which cache blocks
// are worth an option, and setting a knob to the first option that satisfies a predicate; and the
// candidate source of the two conv templates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/cpu/candidate.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels {

// What the device's ISA gives a micro-kernel.
struct VectorUnit {
  std::vector<int> lanes;  // supported float32 widths, ascending
  int registers = 16;      // architectural vector registers
};

inline VectorUnit vector_unit(const DeviceInfo& device) {
  VectorUnit unit;
  const int widest = std::max(4, device.simd_f32_lanes());
  for (int lanes : {4, 8, 16}) {
    if (lanes <= widest) unit.lanes.push_back(lanes);
  }
  const bool is_arm = device.arch == "aarch64" || device.has_isa("neon");
  unit.registers = (device.has_isa("avx512f") || is_arm) ? 32 : 16;
  return unit;
}

// Whether a cache block is worth a knob option: one past twice the extent rounded to its unit (the
// micro-tile) computes nothing more; the floor keeps a few options for small shapes.
inline bool block_fits(std::int64_t block, std::int64_t extent, std::int64_t unit, std::int64_t floor) {
  return block <= std::max(2 * ((extent + unit - 1) / unit * unit), floor);
}

// Sets knob `name` of `config` to its first option whose value satisfies `wanted` (given the
// other knobs as set so far) and returns that option, or -1 when none does.
inline std::int64_t find_option(const search_space::ConfigSpace& space, const std::string& name,
                                const std::function<bool(const search_space::ConfigView&)>& wanted,
                                search_space::Config& config) {
  const std::size_t k = space.knob_index(name);
  for (std::uint64_t o = 0; o < space.option_count(k); ++o) {
    config.options[k] = static_cast<std::uint32_t>(o);
    if (wanted(search_space::ConfigView(space, config))) return static_cast<std::int64_t>(o);
  }
  return -1;
}

// Whether the workload's activations are in a layout the CPU conv kernels read (NCHW, NCHW[b]c):
// no CPU template applies to NHWC, which is for the templates that take it (GPU implicit GEMMs).
inline bool has_cpu_layout(const Workload& workload) { return workload.layout_block != kLayoutNhwc; }

// A conv template on a kept NCHW[b]c layout: the device must have vectors of b lanes (the
// kernels hold one pixel's block in one vector). Throws std::invalid_argument naming both.
inline void check_kept_layout(const std::string& template_name, const Workload& workload, const VectorUnit& unit) {
  const int block = workload.layout_block;
  if (block == kLayoutNchw || std::find(unit.lanes.begin(), unit.lanes.end(), block) != unit.lanes.end()) return;
  throw std::invalid_argument(template_name + ": layout " + layout_name(block) + " needs " + std::to_string(block) +
                              "-lane float vectors; this device's widest have " + std::to_string(unit.lanes.back()));
}

inline bool is_x86(const DeviceInfo& device) { return device.arch == "x86_64" || device.has_isa("avx2"); }

// The 8-bit activations of an i8 workload: u8 on x86 (what VNNI's vpdpbusd multiplies, and
// oneDNN's u8s8s32 primitives take), s8 elsewhere; weights are s8. Every record says which ran.
inline DataType int8_activations(const DeviceInfo& device) { return is_x86(device) ? DataType::kU8 : DataType::kI8; }
// The activations of an i8 or u7 workload: u7 as the workload says (u8 holding 0..127), else as above.
inline DataType int8_activations(const Workload& workload, const DeviceInfo& device) {
  return workload.dtype == DataType::kU7 ? DataType::kU7 : int8_activations(device);
}
// Whether the CPU multiplies u8 by s8 with AVX-512 VNNI's vpdpbusd on zmm registers (the int8
// kernels' VNNI paths); without it, x86 takes AVX2's vpmaddubsw for u7 and int16 pairs for i8.
inline bool has_int8_vnni(const DeviceInfo& device) {
  return is_x86(device) && device.has_isa("avx512_vnni") && device.has_isa("avx512bw");
}

// The one-option knob that writes it into an i8 record's config ("u8" or "s8"; "u7" for a u7
// workload's 7-bit activations), and the type it names.
inline constexpr const char* kActivationsKnob = "activations";
inline void add_activations_knob(search_space::ConfigSpace& space, DataType activations) {
  space.add(search_space::ChoiceKnob{kActivationsKnob, {activations == DataType::kU8   ? "u8"
                                                        : activations == DataType::kU7 ? "u7"
                                                                                       : "s8"}});
}
inline void add_activations_knob(search_space::ConfigSpace& space, const DeviceInfo& device) {
  add_activations_knob(space, int8_activations(device));
}
inline DataType activations_type(const std::string& knob_value) {
  return knob_value == "u8" ? DataType::kU8 : knob_value == "u7" ? DataType::kU7 : DataType::kI8;
}

// true: a config runs on AMX's tiles (the knob of the dot-product GEMMs and direct convolutions,
// in spaces of devices with the type's tiles only).
inline constexpr const char* kAmxKnob = "amx";
inline bool runs_on_amx(const search_space::ConfigView& view) { return view.has(kAmxKnob) && view.flag(kAmxKnob); }

// The C++ element type of a CPU kernel's operand of `type` (element_types.hpp's structs for the
// 16-bit floats).
inline std::string cpu_element_type(DataType type) {
  switch (type) {
    case DataType::kF32: return "float";
    case DataType::kF16: return "optune::kernels::cpu::float16";
    case DataType::kBF16: return "optune::kernels::cpu::bfloat16";
    case DataType::kU8:
    case DataType::kU7: return "std::uint8_t";
    case DataType::kI8: return "std::int8_t";
    case DataType::kI32: return "std::int32_t";
    default: throw std::invalid_argument("cpu kernels: no element type for " + std::string(data_type_name(type)));
  }
}

// The table of a float32 convolution template's records of another dtype, which ran widened
// (conv_candidate_source): rows of the float32 config, and the entry point optune::<function> on
// the dtype's elements through tuned_widened.hpp's run_widened and <function>_tuned.
inline KernelTemplate::TableForm widened_conv_form(const KernelTemplate::TableForm& f32_form, DataType dtype,
                                                   const std::string& table, const std::string& function) {
  const bool int8 = dtype == DataType::kI8;
  const std::string element = dtype == DataType::kF16 ? "kernels::cpu::float16" : "kernels::cpu::bfloat16";
  const std::string input = int8 ? "Activations" : element, filter = int8 ? "std::int8_t" : element,
                    output = int8 ? "std::int32_t" : element;
  KernelTemplate::TableForm form = f32_form;
  form.include = "optune/kernels/cpu/tuned_widened.hpp";
  form.table_name = table;
  form.dtype = dtype;
  form.entry_point =
      "// " + function + " in " + std::string(data_type_name(dtype)) + " (NCHW; " +
      (int8 ? "int32 sums and output" : "float32 sums") +
      ", on the float32 kernel with widened operands), with the tuned config of the\n// layer (else the "
      "default config). Returns whether a tuned config ran.\n" +
      (int8 ? "template <typename Activations>\nbool " : "inline bool ") + function +
      "(const kernels::cpu::Conv2dDims& dims, const " + input + "* input, const " + filter + "* filter,\n    " +
      output + "* output) {\n  return kernels::cpu::run_widened(dims, " +
      (function == "depthwise_conv2d" ? "true" : "false") +
      ", input, filter, output, [&](const float* in, const float* f, float* out) {\n    return kernels::cpu::" +
      function + "_tuned<tuned::" + table + ", tuned::" + table + "Default>(dims, in, f, out);\n  });\n}\n";
  return form;
}

// The candidate translation unit of a conv template whose header
// optune/kernels/cpu/<kernel>.hpp has <kernel>_pack_filter, <kernel>_packed_filter_size and
// <kernel>_packed (and optune/kernels/cpu/<kernel>_nchwc.hpp <kernel>_nchwc_packed, for a kept
// NCHW[b]c layout, and <kernel>_nchw_to_nchwc_packed for a layer reading NCHW into one). The
// filter is packed on the first call and again only when the filter pointer
// changes: weights are constants of an inference (TVM and oneDNN also prepare them outside the
// timed call), so the steady state the runner times is the input transform (none on a kept
// layout) plus the convolution. `constants`: the kernel's template arguments after the config
// (the filter width, and for conv2d the stride, as compile-time constants).
// `operands` (kernels::operator_operands: input, filter, output): where they are not all float32
// the float32 kernel runs on widened copies (widened_operands.hpp): the filter widened as it is
// packed, the input widened and the result rounded into the output in every timed call.
// `run_time`: where the config takes knobs at run time, the candidate's optune_set_knobs and the
// expression of its thread count.

// The optune_set_knobs of a conv candidate whose config takes its schedule at run time
// (run_time_schedule: conv2d.cpu's and the dot-product direct kernels'): threads, loop order and
// split, in that order (the templates' run_time_knob_values).
inline std::string conv_schedule_set_knobs() {
  return "// threads, loop_order and parallel, as the worker passes them.\n"
         "extern \"C\" void " + std::string(kSetKnobsSymbol) + "(const long long* values, int count) {\n"
         "  using namespace optune::kernels::cpu;\n"
         "  if (count == 3)\n"
         "    conv_detail::run_time_schedule = {static_cast<int>(values[0]), static_cast<ConvLoopOrder>(values[1]),\n"
         "                                      static_cast<ConvParallel>(values[2])};\n"
         "}\n\n";
}
struct ConvRunTimeKnobs {
  std::string set_knobs;  // the function's definition, or "" (all compiled in)
  std::string threads = "kConfig.threads";
};
inline std::string conv_candidate_source(const std::string& template_name, const std::string& kernel,
                                         const Workload& workload, const std::vector<OperandDescription>& operands,
                                         const std::string& dims_literal, const std::string& config_literal,
                                         const std::string& constants, const ConvRunTimeKnobs& run_time = {}) {
  const std::string header = workload.layout_block == kLayoutNchw ? kernel : kernel + "_nchwc";
  const std::string run = workload.nchw_input ? kernel + "_nchw_to_nchwc" : header;
  const bool widening = std::any_of(operands.begin(), operands.end(),
                                    [](const OperandDescription& o) { return o.dtype != DataType::kF32; });
  const std::string pack = kernel + "_pack_filter<kConfig>(kDims, ";
  const std::string reserve = "packed.reserve(" + kernel + "_packed_filter_size<kConfig>(kDims))";
  const auto type = [&](std::size_t i) { return cpu_element_type(operands.at(i).dtype); };
  const auto count = [&](std::size_t i) { return std::to_string(operands.at(i).count); };
  const std::string source =
      "// optune candidate of " + template_name + " for " + workload.key() +
      "\n"
      "// Build: c++ -std=c++20 -O3 -march=<target> -fopenmp -fPIC -shared -I<kernels/include>\n"
      "#include <optune/kernels/cpu/" + header + ".hpp>\n" +
      (widening ? "#include <optune/kernels/cpu/widened_operands.hpp>\n" : "") +
      "\n"
      "namespace {\n"
      "constexpr auto kDims = " + dims_literal + ";\n"
      "constexpr auto kConfig = " + config_literal + ";\n"
      "}  // namespace\n\n" + run_time.set_knobs +
      "extern \"C\" void " + std::string(kCandidateSymbol) +
      "(const void* const* inputs, void* output) {\n"
      "  using namespace optune::kernels::cpu;\n"
      "  static AlignedBuffer packed;\n"
      "  static const void* packed_from = nullptr;\n"
      "  if (packed_from != inputs[1]) {\n";
  if (!widening) {
    return source + "    " + pack + "static_cast<const float*>(inputs[1]), " + reserve +
           ");\n"
           "    packed_from = inputs[1];\n"
           "  }\n"
           "  " + run + "_packed<kConfig, " + constants +
           ">(kDims, static_cast<const float*>(inputs[0]), packed.data(), static_cast<float*>(output));\n"
           "}\n";
  }
  return source + "    AlignedBuffer wide_filter;\n"
         "    " + pack + "widened(static_cast<const " + type(1) + "*>(inputs[1]), " + count(1) +
         ", wide_filter, 1), " + reserve +
         ");\n"
         "    packed_from = inputs[1];\n"
         "  }\n"
         "  static AlignedBuffer wide_input, wide_output;\n"
         "  const float* input = widened(static_cast<const " + type(0) + "*>(inputs[0]), " + count(0) +
         ", wide_input, " + run_time.threads + ");\n"
         "  float* result = wide_output.reserve(" + count(2) + ");\n"
         "  " + run + "_packed<kConfig, " + constants + ">(kDims, input, packed.data(), result);\n"
         "  narrowed(result, " + count(2) + ", static_cast<" + type(2) + "*>(output), " + run_time.threads + ");\n"
         "}\n";
}

}  // namespace optune::kernels
