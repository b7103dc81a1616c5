// Reference implementations and operand layout of every op, for the correctness check of
// candidates: the runner fills the inputs with random values, poisons the output, runs a
// candidate and compares against reference() by relative L2 error.
#pragma once

#include <cstddef>
#include <vector>

#include "optune/kernels/workload.hpp"

namespace optune::kernels {

std::vector<std::size_t> input_sizes(const Workload& workload);  // element counts, in ABI order
std::size_t output_size(const Workload& workload);
// Computes the exact result (double accumulation where cheap, Eigen for large GEMMs).
void reference(const Workload& workload, const std::vector<const float*>& inputs, float* output);
// sqrt(sum (got - want)^2) / sqrt(sum want^2); NaN anywhere gives +infinity.
double relative_l2_error(const float* got, const float* want, std::size_t n);

}  // namespace optune::kernels
