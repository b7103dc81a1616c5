// The symbol every CPU candidate shared object exports. Shapes are compile-time constants of the
// candidate; inputs are in the order of reference.hpp's input_sizes().
#pragma once

namespace optune::kernels {

inline constexpr const char* kCandidateSymbol = "optune_kernel";
using CandidateFunction = void (*)(const float* const* inputs, float* output);

}  // namespace optune::kernels
