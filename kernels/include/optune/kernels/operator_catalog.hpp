// The operator catalog: everything optune knows about an operator apart from its schedule
// templates, one entry per operator (kernels/src/ops/<op>.cpp), listed once in
// kernels/src/operator_catalog.cpp. Workload's key, flops and `--shape` parser, the references,
// the cost model's shape features and the command line's lists of operators all ask the catalog,
// so adding an operator is its entry plus its templates; no code outside the entries switches
// on Op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "optune/kernels/workload.hpp"

namespace optune::kernels {

// One named extent of an operator's `--shape` ("M", "stride"). An extent that is not required
// takes `fallback` when the shape leaves it out.
struct ExtentSpec {
  const char* name;
  bool required;
  std::int64_t fallback;
};

// One field of the canonical key after the dtype: its prefix in the key ("st") and the extent
// it holds ("stride"). The fields' order and prefixes are the key format (a contract: keys are
// stored in databases).
struct KeyField {
  const char* prefix;
  const char* extent;
};

// Extents by name, as parsed from `--shape` or a key, or read off a workload.
using ExtentValues = std::map<std::string, std::int64_t, std::less<>>;

class OperatorEntry {
 public:
  virtual ~OperatorEntry() = default;

  virtual Op op() const = 0;
  // In keys, suites, job files and `--op`: "gemm", "conv2d", "depthwise_conv2d".
  virtual std::string_view name() const = 0;

  // `--shape` and the key.
  virtual const std::vector<ExtentSpec>& extents() const = 0;  // the named extents, in key order
  virtual const std::vector<KeyField>& key_fields() const = 0;
  // Whether `--shape` may also list every extent positionally, in extents() order ("M,N,K").
  virtual bool takes_positional_shape() const { return false; }
  // Whether the operator has an activation layout (Layouts): named in its key after the
  // operator's name and in `--shape` as "layout=...". Without one, layout_block is always NCHW.
  virtual bool has_layout() const = 0;

  // The workload of complete extents (every extent of extents() present; the `--shape` parser
  // and the key parser fill in fallbacks first). Throws std::invalid_argument "<context>: ..."
  // for extents that contradict each other in a way the shape struct cannot hold.
  virtual Workload workload_from(const ExtentValues& extents, std::string_view context) const = 0;
  // The extents of a workload, by extents() name (the inverse of workload_from).
  virtual ExtentValues extents_of(const Workload& workload) const = 0;
  // The operator's checks of a workload of this op: its layout, the shape struct's kind, every
  // extent in range, geometry. Throws std::invalid_argument "<context>: ...". (The checks every
  // operator shares, dtype and total tensor size, are validate_workload's.)
  virtual void validate(const Workload& workload, std::string_view context) const = 0;

  // Elements of all operands (inputs and output), in double so that absurd shapes cannot
  // overflow; for the tensor size limit.
  virtual double tensor_elements(const Workload& workload) const = 0;
  virtual double flops(const Workload& workload) const = 0;  // multiply-adds count as 2

  // Operands as the worker allocates them (reference.hpp says their dtypes): element counts of
  // the inputs in ABI order and of the output, and every operand's name (inputs, then output).
  virtual std::vector<std::size_t> input_sizes(const Workload& workload) const = 0;
  virtual std::size_t output_size(const Workload& workload) const = 0;
  virtual std::vector<std::string> operand_names(const Workload& workload) const = 0;
  // The inputs' dtypes, in ABI order: the workload's dtype for each unless a dtype brings inputs
  // of another type (gemm's e4m3: float32 scales beside the fp8 matrices).
  virtual std::vector<DataType> input_dtypes(const Workload& workload) const {
    return std::vector<DataType>(input_sizes(workload).size(), workload.dtype);
  }
  // Products summed into one output element (K for GEMM): the check's tolerance grows with it.
  virtual double reduction_length(const Workload& workload) const = 0;
  // The exact result, in double, of inputs given as doubles (values of their dtypes, so exact);
  // inputs.size() already checked against input_sizes().
  virtual void reference(const Workload& workload, const std::vector<const double*>& inputs,
                         double* output) const = 0;

  // The cost model's features of the workload, by stable name ("shape.M", ...): log2 of each
  // extent, so that a model trained on other shapes of a template transfers.
  virtual std::vector<std::pair<std::string, float>> shape_features(const Workload& workload) const = 0;
};

// Every operator, in the order they are listed (help texts, error messages).
std::span<const OperatorEntry* const> operator_catalog();
const OperatorEntry& operator_entry(Op op);
// The entry named `name` (surrounding spaces ignored); nullptr when there is none.
const OperatorEntry* find_operator(std::string_view name);
// The operators' names for people: "gemm, conv2d, depthwise_conv2d" with the default
// separators, "gemm, conv2d or depthwise_conv2d" with last_separator " or ".
std::string operator_names(std::string_view separator = ", ", std::string_view last_separator = ", ");

}  // namespace optune::kernels
