#include "optune/measure/median_interval.hpp"

#include <algorithm>
#include <cmath>

#include "optune/measure/measure_result.hpp"

namespace optune::measure {
namespace {

// P(B <= j) for B ~ Binomial(n, 1/2), through log-gamma so that thousands of costs do not overflow.
double binomial_cdf_half(std::size_t n, std::size_t j) {
  double sum = 0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (std::size_t i = 0; i <= j && i <= n; ++i) {
    const double log_choose = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0);
    sum += std::exp(log_choose + log_half_n);
  }
  return sum;
}

}  // namespace

Interval median_interval(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  // [x(k), x(n+1-k)] (1-based) misses the median with probability 2 P(B <= k - 1).
  std::size_t k = 1;
  while (k + 1 <= (n + 1) / 2 && 1 - 2 * binomial_cdf_half(n, k) >= kMedianConfidence) ++k;
  return {values[k - 1], values[n - k]};
}

std::optional<double> median_spread(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  const double middle = median(values);
  if (!(middle > 0)) return std::nullopt;
  const Interval interval = median_interval(values);
  return (interval.high - interval.low) / 2 / middle;
}

}  // namespace optune::measure
