// The operands of a user kernel (a kernel file, kernels/kernel_file.hpp) on the worker's side.
// A built-in operator's operands follow from its workload key (worker_operands.hpp); a kernel's
// come with the request, as KernelOperandsSpec: its arguments in kernel order with dtypes, counts,
// scalar values and inits, and how its outputs are checked. The worker keeps them as typed host
// bytes (KernelOperands), one buffer per argument, and checks outputs element by element
// (|out - ref| <= atol + rtol * |ref|, in double) against the expected values.
//
// Every buffer has a guard after its last element, refilled before each checked run and checked
// after it, so a candidate that writes past an argument's end is a wrong answer, not a silent
// corruption of the next candidate's inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/kernel_problem.hpp"
#include "optune/measure/cache_line_allocator.hpp"

namespace optune::measure {

struct KernelArgument {
  std::string name;
  kernels::DataType dtype = kernels::DataType::kF32;
  bool is_buffer = true;
  std::int64_t count = 0;  // buffers: elements
  double value = 0;        // scalars
  std::optional<kernels::BufferInit> init;  // inputs and read-write outputs
  bool is_output = false;
  std::string data_file;  // instead of init: the initial values, raw, read by the worker
};

// How the expected outputs come about, and the tolerance of the comparison.
struct KernelCheckSpec {
  kernels::KernelCheck::Kind kind = kernels::KernelCheck::Kind::kNone;
  std::string entry;          // kReference: the reference kernel (OpenCL) or function (cpu)
  std::string source;         // kReference on OpenCL: the reference program's text
  std::string build_options;  // kReference on OpenCL: one valid config's defines and the file's options
  kernels::LaunchSize launch; // kReference on OpenCL
  std::vector<std::string> expected_files;  // kExpected: raw values, one file per output, read by the worker
  double rtol = 0;
  double atol = 0;
};

struct KernelOperandsSpec {
  std::vector<KernelArgument> args;
  KernelCheckSpec check;
};

// The spec of a problem bound to a device; `reference_build_options` as KernelCheckSpec says.
KernelOperandsSpec kernel_operands_spec(const kernels::KernelProblem& problem, const std::string& reference_source,
                                        const std::string& reference_build_options);

void to_json(nlohmann::json& json, const KernelOperandsSpec& spec);
void from_json(const nlohmann::json& json, KernelOperandsSpec& spec);  // throws on a malformed spec

// Bytes past every buffer's end that a candidate must leave alone.
inline constexpr std::size_t kGuardBytes = 64;

struct HostArgument {
  KernelArgument spec;
  AlignedBytes bytes;              // buffers: the elements, then the guard; scalars: the value in its dtype
  std::vector<std::byte> initial;  // inputs and read-write outputs: the elements a run starts from
  std::size_t size() const;        // bytes of the elements (scalars: of the value), without the guard
};

// Whether the bytes after a buffer's elements are as reset_for_run left them.
bool guard_intact(const HostArgument& arg);

struct KernelOperands {
  std::string id;  // what they were made for (workload key, seed, spec); "" none
  std::vector<HostArgument> args;
  std::vector<std::vector<std::byte>> expected;  // per output argument in argument order; empty until known
  KernelCheckSpec check;
  bool has_expected() const { return !expected.empty(); }
  // The check's reference has yet to run on these operands to give the expected outputs.
  bool needs_reference() const { return !has_expected() && check.kind == kernels::KernelCheck::Kind::kReference; }
};

// Makes the operands of a request's kernel unless they are already there: inputs from their init
// (random from the seed: uniform in [-1, 1) for floats, in [0, 100) for integers), and for a
// check by expected files, those files' values. Throws std::runtime_error naming the argument or
// file (too large to allocate, a file of the wrong size).
void prepare_kernel_operands(KernelOperands& operands, const std::string& workload_key, std::uint64_t seed,
                             const KernelOperandsSpec& spec);

// Before a checked run: inputs and read-write outputs back to their initial values (a candidate
// may have written into them), write-only outputs poisoned (pattern 0: NaN for floats, 0xA5 bytes
// for integers; pattern 1: another NaN, 0x5A bytes), guards refilled.
void reset_for_run(KernelOperands& operands, int poison_pattern);

// Each argument's address as a kernel takes it: a buffer's first element, a scalar's value.
std::vector<void*> argument_pointers(KernelOperands& operands);

struct OutputCheck {
  bool passed = false;
  double max_error = 0;  // largest |out - ref| / (atol + rtol * |ref|) over the outputs; inf for NaN
  std::string message;   // why it failed, for the record
};

// After a checked run: guards intact, and each output within tolerance of its expected values.
OutputCheck check_outputs(const KernelOperands& operands);
// Kernels with no expected values: guards intact, no float output left NaN, and every output
// equal to `previous` (the outputs of a run that started from the other poison pattern), so an
// element no run writes shows up as a difference.
OutputCheck check_written(const KernelOperands& operands, const std::vector<std::vector<std::byte>>& previous);
// The output arguments' current bytes (without guards), in argument order.
std::vector<std::vector<std::byte>> output_bytes(const KernelOperands& operands);
// After the check's reference has run (from reset_for_run): its outputs become the expected ones,
// unless it wrote past the end of a buffer, which leaves its outputs untrusted and the operands
// without expected values. Returns that problem ("wrote past the end of argument 'y'"), "" if none.
std::string take_reference_outputs(KernelOperands& operands);

}  // namespace optune::measure
