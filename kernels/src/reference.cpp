// Operand descriptions and reference results of every op, for the worker's correctness check:
// each operator's counts and reference are its catalog entry's (ops/<op>.cpp); here the dtype
// rules, the checks and the error measure every operator shares.
#include "optune/kernels/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "optune/kernels/operator_catalog.hpp"

namespace optune::kernels {
namespace {

const OperatorEntry& checked_entry(const Workload& workload, std::size_t inputs) {
  const OperatorEntry& entry = operator_entry(workload.op);
  const std::size_t expected = entry.input_sizes(workload).size();
  if (inputs != expected) {
    throw std::invalid_argument("reference: " + std::string(entry.name()) + " takes " + std::to_string(expected) +
                                " inputs, got " + std::to_string(inputs));
  }
  return entry;
}

template <typename T>
double relative_l2(const T* got, const T* want, std::size_t n) {
  RelativeL2 l2;
  l2.add(got, want, n);
  return l2.error();
}

// The largest magnitude of a value of an integer type (of a 32-bit one or wider, 2^31).
double integer_magnitude(DataType type) {
  if (data_type_bytes(type) > 2) return std::ldexp(1.0, 31);
  const auto [low, high] = integer_range(type);
  return std::max(-low, high);
}

}  // namespace

DataType output_dtype(DataType dtype) {
  if (dtype == DataType::kE4M3) return DataType::kBF16;
  return is_floating(dtype) ? dtype : DataType::kI32;
}

std::vector<OperandDescription> operator_operands(const Workload& workload, const std::vector<DataType>& input_dtypes) {
  const OperatorEntry& entry = operator_entry(workload.op);
  const std::vector<std::size_t> sizes = entry.input_sizes(workload);
  const std::vector<std::string> names = entry.operand_names(workload);
  const std::vector<DataType> dtypes = input_dtypes.empty() ? entry.input_dtypes(workload) : input_dtypes;
  if (!input_dtypes.empty() && input_dtypes.size() != sizes.size())
    throw std::invalid_argument(std::string(entry.name()) + " takes " + std::to_string(sizes.size()) +
                                " inputs, not " + std::to_string(input_dtypes.size()) + " dtypes");
  std::vector<OperandDescription> operands;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    operands.push_back({names.at(i), dtypes.at(i), sizes[i], false});
  operands.push_back({names.at(sizes.size()), output_dtype(workload.dtype), entry.output_size(workload), true});
  return operands;
}

std::vector<std::size_t> input_sizes(const Workload& workload) {
  return operator_entry(workload.op).input_sizes(workload);
}

std::size_t output_size(const Workload& workload) { return operator_entry(workload.op).output_size(workload); }

void reference(const Workload& workload, const std::vector<const double*>& inputs, double* output) {
  checked_entry(workload, inputs.size()).reference(workload, inputs, output);
}

void reference(const Workload& workload, const std::vector<const float*>& inputs, float* output) {
  const OperatorEntry& entry = checked_entry(workload, inputs.size());
  const std::vector<std::size_t> sizes = entry.input_sizes(workload);
  std::vector<std::vector<double>> widened;
  widened.reserve(inputs.size());  // the pointers below stay valid
  std::vector<const double*> pointers;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    widened.emplace_back(inputs[i], inputs[i] + sizes[i]);
    pointers.push_back(widened.back().data());
  }
  std::vector<double> result(entry.output_size(workload));
  entry.reference(workload, pointers, result.data());
  std::transform(result.begin(), result.end(), output, [](double value) { return static_cast<float>(value); });
}

// A value that is not finite (NaN, infinity) makes its part's sums not finite, which the loop
// checks once, after the part: it stays a plain sum the compiler vectorises.
template <typename T>
void RelativeL2::add(const T* got, const T* want, std::size_t n) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = double(got[i]) - double(want[i]);
    difference += d * d;
    norm += double(want[i]) * double(want[i]);
  }
  if (!std::isfinite(difference) || !std::isfinite(norm)) finite_ = false;
  difference_ += difference;
  norm_ += norm;
}
template void RelativeL2::add<float>(const float*, const float*, std::size_t);
template void RelativeL2::add<double>(const double*, const double*, std::size_t);

void RelativeL2::add(const RelativeL2& other) {
  difference_ += other.difference_;
  norm_ += other.norm_;
  finite_ = finite_ && other.finite_;
}

double RelativeL2::error() const {
  if (!finite_) return std::numeric_limits<double>::infinity();
  if (difference_ == 0.0) return 0.0;
  return norm_ == 0.0 ? std::numeric_limits<double>::infinity() : std::sqrt(difference_ / norm_);
}

double relative_l2_error(const double* got, const double* want, std::size_t n) { return relative_l2(got, want, n); }
double relative_l2_error(const float* got, const float* want, std::size_t n) { return relative_l2(got, want, n); }

double check_tolerance(const Workload& workload, DataType output, double f32_tolerance) {
  if (!is_floating(output)) return 0.0;
  if (output == DataType::kF32 || output == DataType::kF64) return f32_tolerance;
  const double length = operator_entry(workload.op).reduction_length(workload);
  return std::max(f32_tolerance, 2 * unit_roundoff(output) + length * unit_roundoff(DataType::kF32));
}

bool accumulation_fits_int32(const Workload& workload, const std::vector<DataType>& input_dtypes) {
  double product = 1;
  for (DataType type : input_dtypes) product *= integer_magnitude(type);
  return operator_entry(workload.op).reduction_length(workload) * product < std::ldexp(1.0, 31);
}

}  // namespace optune::kernels
