// The operator catalog's promises: each operator listed once, found by name and by Op, and every
// entry's parts agreeing with each other (a shape of its required extents parses, keys round
// trip, the reference takes the operands input_sizes() names, features are named "shape.*").
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "optune/kernels/operator_catalog.hpp"
#include "optune/kernels/reference.hpp"

namespace optune::kernels {
namespace {

// "M=8,N=8,K=8": every required extent at 8, which any operator's geometry accepts.
std::string shape_of_required_extents(const OperatorEntry& entry) {
  std::string text;
  for (const auto& spec : entry.extents()) {
    if (!spec.required) continue;
    if (!text.empty()) text += ",";
    text += std::string(spec.name) + "=8";
  }
  return text;
}

TEST(OperatorCatalog, ListsEachOperatorOnceByNameAndOp) {
  std::set<std::string> names;
  for (const OperatorEntry* entry : operator_catalog()) {
    const std::string name(entry->name());
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(find_operator(name), entry);
    EXPECT_EQ(find_operator(" " + name + " "), entry);
    EXPECT_EQ(&operator_entry(entry->op()), entry);
    EXPECT_EQ(op_name(entry->op()), name);
    EXPECT_EQ(parse_op(name), entry->op());
  }
  EXPECT_EQ(find_operator("matmul"), nullptr);
}

TEST(OperatorCatalog, NamesListTheOperatorsInCatalogOrder) {
  EXPECT_EQ(operator_names(), "gemm, conv2d, depthwise_conv2d");
  EXPECT_EQ(operator_names(", ", " or "), "gemm, conv2d or depthwise_conv2d");
}

TEST(OperatorCatalog, KeyFieldsNameExtentsOfTheirEntry) {
  for (const OperatorEntry* entry : operator_catalog()) {
    std::set<std::string> extents;
    for (const auto& spec : entry->extents()) extents.insert(spec.name);
    for (const auto& field : entry->key_fields()) {
      EXPECT_EQ(extents.count(field.extent), 1u) << entry->name() << ": " << field.extent;
    }
  }
}

TEST(OperatorCatalog, EveryEntryParsesKeysAndComputesItsReference) {
  for (const OperatorEntry* entry : operator_catalog()) {
    const Workload workload = parse_workload(entry->op(), shape_of_required_extents(*entry));
    EXPECT_EQ(workload.op, entry->op());
    EXPECT_EQ(workload.key().rfind(std::string(entry->name()) + ".", 0), 0u) << workload.key();
    EXPECT_EQ(parse_workload_key(workload.key()), workload) << workload.key();
    EXPECT_GT(workload.flops(), 0.0);

    std::vector<std::vector<float>> inputs;
    std::vector<const float*> pointers;
    for (std::size_t size : input_sizes(workload)) inputs.emplace_back(size, 1.0f);
    for (const auto& input : inputs) pointers.push_back(input.data());
    std::vector<float> output(output_size(workload), -1.0f);
    reference(workload, pointers, output.data());
    EXPECT_GT(output.front(), 0.0f) << entry->name();

    for (const auto& [name, value] : entry->shape_features(workload)) {
      EXPECT_EQ(name.rfind("shape.", 0), 0u) << name;
      EXPECT_GE(value, 0.0f) << name;
    }
  }
}

}  // namespace
}  // namespace optune::kernels
