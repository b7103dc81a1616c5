// The operands the worker keeps for the workload it is measuring, one typed model for built-in
// operators and kernel files alike: typed host bytes per operand, each buffer with a guard after
// its end (KernelOperands). An operator's come from its catalog entry and the workload's dtype
// (kernels/reference.hpp): random inputs over the whole range of their type (never zeros), an
// output to poison, and the reference result in double from those very inputs. A kernel file's
// come with the request (KernelOperandsSpec). Made once per workload and shared by every backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "optune/kernels/data_type.hpp"
#include "optune/measure/kernel_operands.hpp"

namespace optune::measure {

struct Operands {
  KernelOperands values;  // an operator's inputs then its output, or a kernel file's arguments
  std::vector<double> reference;  // operators: the exact output, in double
};

// Makes the operands of the operator workload with this key unless they are already there.
// `input_dtypes`, where not empty, are the inputs' types as the candidate's template reads them
// (kernels::operator_operands). Throws std::invalid_argument for a key or dtypes that do not fit.
void prepare_operator_operands(Operands& operands, const std::string& key, std::uint64_t seed,
                               const std::vector<kernels::DataType>& input_dtypes);

// An operator's output after a checked run, against the reference: the relative L2 error (+inf
// for NaN or a write past the output's end).
double operator_output_error(const Operands& operands);

}  // namespace optune::measure
