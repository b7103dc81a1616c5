#include "entry_support.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace optune::kernels {

void fail(std::string_view context, const std::string& what) {
  throw std::invalid_argument(std::string(context) + ": " + what);
}

void check_extent(std::string_view name, std::optional<std::int64_t> value, std::string_view text,
                  std::string_view context) {
  const bool may_be_zero = name == "pad";
  if (!value || *value < (may_be_zero ? 0 : 1)) {
    fail(context, "extent " + std::string(name) + " must be " +
                      (may_be_zero ? "a non-negative" : "a positive") + " integer, got '" +
                      std::string(text) + "'");
  }
  if (*value > kMaxExtent) {
    fail(context, std::string(name) + "=" + std::string(text) + " exceeds the largest extent " +
                      std::to_string(kMaxExtent));
  }
}

void check_extent(std::string_view name, std::int64_t value, std::string_view context) {
  check_extent(name, value, std::to_string(value), context);
}

void reject_nchw_input(const Workload& workload, std::string_view context) {
  fail(context, "only conv2d may read an NCHW input into a blocked layout (nchw-nchw8c), not " +
                    std::string(op_name(workload.op)) + " on " + layout_name(workload.layout_block));
}

float log2_extent(std::int64_t extent) {
  return static_cast<float>(std::log2(std::max<std::int64_t>(extent, 1)));
}

}  // namespace optune::kernels
