// The list of the catalog's entries: an operator is its file in ops/ and its two lines here
// (the declaration of its entry and its place in the list).
#include "optune/kernels/operator_catalog.hpp"

#include <stdexcept>

#include "trim.hpp"

namespace optune::kernels {

// Defined in ops/<name>.cpp.
const OperatorEntry& gemm_entry();
const OperatorEntry& conv2d_entry();
const OperatorEntry& depthwise_conv2d_entry();

std::span<const OperatorEntry* const> operator_catalog() {
  static const OperatorEntry* const entries[] = {
      &gemm_entry(),
      &conv2d_entry(),
      &depthwise_conv2d_entry(),
  };
  return entries;
}

const OperatorEntry& operator_entry(Op op) {
  for (const OperatorEntry* entry : operator_catalog()) {
    if (entry->op() == op) return *entry;
  }
  throw std::logic_error("unknown op");
}

const OperatorEntry* find_operator(std::string_view name) {
  for (const OperatorEntry* entry : operator_catalog()) {
    if (trim(name) == entry->name()) return entry;
  }
  return nullptr;
}

std::string operator_names(std::string_view separator, std::string_view last_separator) {
  const auto entries = operator_catalog();
  std::string names;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) names += i + 1 == entries.size() ? last_separator : separator;
    names += entries[i]->name();
  }
  return names;
}

}  // namespace optune::kernels
