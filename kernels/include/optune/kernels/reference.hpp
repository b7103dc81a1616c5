// The operands of a built-in operator and the check of a candidate's result. One typed model for
// every operator and dtype: each operand has a name, a dtype and an element count (the catalog
// entry says names and counts, the workload's dtype the types), and the worker keeps them as
// typed host bytes as it keeps a kernel file's arguments (measure/kernel_operands.hpp). The
// reference runs in double from the very low-precision inputs a candidate reads; the check is the
// relative L2 error against it, within a tolerance that follows from the dtype and the reduction
// length (check_tolerance).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "optune/kernels/data_type.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::kernels {

struct OperandDescription {
  std::string name;  // the catalog entry's: "A", "filter"
  DataType dtype = DataType::kF32;
  std::size_t count = 0;  // elements
  bool is_output = false;
};

// What a workload's dtype makes of each operand: f32, f16 and bf16 are inputs and output in the
// type (accumulation in float32 is the template's business); i8 is signed 8-bit inputs and an
// int32 output (int32 accumulation); e4m3 (gemm only) is fp8 matrices, two float32 scales and a
// bf16 output, as torch._scaled_mm (the catalog entry's input_dtypes). A template may read an input of the same width with the
// other signedness (u8 activations for x86's VNNI): operator_operands' `input_dtypes` overrides.
DataType output_dtype(DataType dtype);
// Every operand, inputs in ABI order then the output. `input_dtypes`, where not empty, gives the
// inputs' types (a template's choice of signedness; one per input).
std::vector<OperandDescription> operator_operands(const Workload& workload,
                                                  const std::vector<DataType>& input_dtypes = {});

std::vector<std::size_t> input_sizes(const Workload& workload);  // element counts, in ABI order
std::size_t output_size(const Workload& workload);
// The exact result in double of inputs given as doubles (throws std::invalid_argument on a wrong
// number of inputs). The float form is for float32 callers (tests, benchmarks): the same
// reference, its result rounded to float.
void reference(const Workload& workload, const std::vector<const double*>& inputs, double* output);
void reference(const Workload& workload, const std::vector<const float*>& inputs, float* output);
// sqrt(sum (got - want)^2) / sqrt(sum want^2); NaN anywhere gives +infinity.
double relative_l2_error(const double* got, const double* want, std::size_t n);
double relative_l2_error(const float* got, const float* want, std::size_t n);
// The same over an output given in parts (a check's millions of elements, widened a part at a
// time): add() each part, then error().
class RelativeL2 {
 public:
  template <typename T>
  void add(const T* got, const T* want, std::size_t n);
  // Another part's sums (a part compared on a thread of its own).
  void add(const RelativeL2& other);
  double error() const;

 private:
  double difference_ = 0.0, norm_ = 0.0;
  bool finite_ = true;
};

// The largest relative L2 error a candidate of the workload may have (docs: "The check"):
//   f32:        f32_tolerance (the timing policy's, 1e-4 unless set);
//   f16, bf16:  max(f32_tolerance, 2 u(out) + L u(f32)), with u the type's unit roundoff and L the
//               reduction length: the output's rounding plus float32 accumulation's worst growth;
//   integers:   0 (int32 accumulation is exact; the worker refuses shapes that could overflow it).
double check_tolerance(const Workload& workload, DataType output, double f32_tolerance);
// Integer workloads: whether the largest possible sum of products of the inputs' ranges fits int32.
bool accumulation_fits_int32(const Workload& workload, const std::vector<DataType>& input_dtypes);

}  // namespace optune::kernels
