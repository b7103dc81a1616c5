// How far a median is to be trusted: the distribution-free confidence interval of the median of a
// sample (order statistics and the binomial distribution; no assumption about the shape of the
// timings, which on a shared machine have long right tails). A record's spread and the final
// comparison's interval of a speed-up are both read from it.
#pragma once

#include <optional>
#include <vector>

namespace optune::measure {

// The confidence the intervals aim for. With fewer than six values no pair of order statistics
// reaches it; the interval is then the whole range (93.75% for five values, the default repeat).
inline constexpr double kMedianConfidence = 0.95;

struct Interval {
  double low = 0;
  double high = 0;
};

// The narrowest interval [x(k), x(n+1-k)] of the sorted values that holds the true median with at
// least kMedianConfidence, else the range; {0, 0} for no values.
Interval median_interval(std::vector<double> values);

// The interval's relative half-width, (high - low) / 2 / median: 0.05 means the median is known
// to about +-5%. nullopt for fewer than two values or a median that is not positive.
std::optional<double> median_spread(const std::vector<double>& values);

}  // namespace optune::measure
