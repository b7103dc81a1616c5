// Operand sizes and reference results of every op, for the runner's correctness check: each
// operator's are its catalog entry's (ops/<op>.cpp); here the checks and the error measure
// every operator shares.
#include "optune/kernels/reference.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "optune/kernels/operator_catalog.hpp"

namespace optune::kernels {

std::vector<std::size_t> input_sizes(const Workload& workload) {
  return operator_entry(workload.op).input_sizes(workload);
}

std::size_t output_size(const Workload& workload) { return operator_entry(workload.op).output_size(workload); }

void reference(const Workload& workload, const std::vector<const float*>& inputs, float* output) {
  const OperatorEntry& entry = operator_entry(workload.op);
  const std::size_t expected = entry.input_sizes(workload).size();
  if (inputs.size() != expected) {
    throw std::invalid_argument("reference: " + std::string(entry.name()) + " takes " + std::to_string(expected) +
                                " inputs, got " + std::to_string(inputs.size()));
  }
  entry.reference(workload, inputs, output);
}

double relative_l2_error(const float* got, const float* want, std::size_t n) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(want[i])) {
      return std::numeric_limits<double>::infinity();
    }
    const double d = double(got[i]) - double(want[i]);
    difference += d * d;
    norm += double(want[i]) * double(want[i]);
  }
  if (difference == 0.0) return 0.0;
  return norm == 0.0 ? std::numeric_limits<double>::infinity() : std::sqrt(difference / norm);
}

}  // namespace optune::kernels
