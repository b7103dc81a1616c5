// The symbol every CPU candidate shared object exports. Shapes are compile-time constants of the
// candidate; inputs are in the order of reference.hpp's input_sizes(), each of the dtype
// operator_operands() gives it (the candidate knows its own and casts).
#pragma once

namespace optune::kernels {

inline constexpr const char* kCandidateSymbol = "optune_kernel";
using CandidateFunction = void (*)(const void* const* inputs, void* output);
// A candidate whose template passes some knobs at run time (KernelTemplate::run_time_knob_values)
// exports this too: the worker calls it with their values once the object is loaded, before any run.
inline constexpr const char* kSetKnobsSymbol = "optune_set_knobs";
using SetKnobsFunction = void (*)(const long long* values, int count);

// A user kernel's candidate (a kernel file of the cpu backend) exports a trampoline taking every
// argument's address in kernel order (a buffer's first element, a scalar's value), which calls
// the file's entry with typed arguments; where the file's check runs a reference function, the
// object exports that too, with the same calling convention.
inline constexpr const char* kUserKernelSymbol = "optune_user_kernel";
inline constexpr const char* kUserReferenceSymbol = "optune_user_reference";
// The part of a candidate's source that builds its check reference stands inside
// `#ifndef OPTUNE_WITHOUT_REFERENCE`: where a candidate does not build, the builder builds it again
// with this macro defined, and a candidate that builds so tells a reference that does not build
// (the kernel file's fault) from a candidate that does not (a build_error record).
inline constexpr const char* kWithoutReferenceMacro = "OPTUNE_WITHOUT_REFERENCE";
using UserKernelFunction = void (*)(void* const* args);

}  // namespace optune::kernels
