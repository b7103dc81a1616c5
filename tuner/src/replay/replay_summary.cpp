#include "optune/tuner/replay/replay_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace optune::tuner {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// Best time after each evaluation, padded to `length` with the last value (a tuner that ran out
// of configurations keeps its best); infinity until something succeeded.
std::vector<double> best_so_far(const std::vector<double>& run, std::size_t length) {
  std::vector<double> best;
  double current = kNever;
  for (std::size_t t = 0; t < length; ++t) {
    if (t < run.size() && !std::isnan(run[t])) current = std::min(current, run[t]);
    best.push_back(current);
  }
  return best;
}

}  // namespace

std::vector<double> random_search_expected_best(const std::vector<double>& times, std::size_t max_draws) {
  std::vector<double> ok;
  for (double time : times)
    if (!std::isnan(time)) ok.push_back(time);
  if (ok.empty()) throw std::invalid_argument("random search baseline: no successful configuration");
  std::sort(ok.begin(), ok.end());
  const double n = static_cast<double>(times.size());
  std::vector<double> expected;
  for (std::size_t k = 1; k <= max_draws; ++k) {
    // none_drawn = P(none of the i best is among k draws) = C(n - i, k) / C(n, k); the best
    // drawn is the i-th with probability none_drawn(i - 1) - none_drawn(i).
    double none_drawn = 1, sum = 0;
    for (std::size_t i = 1; i <= ok.size() && none_drawn > 0; ++i) {
      const double left = n - static_cast<double>(i) - static_cast<double>(k) + 1;
      const double next = left > 0 ? none_drawn * left / (n - static_cast<double>(i) + 1) : 0.0;
      sum += ok[i - 1] * (none_drawn - next);
      none_drawn = next;
    }
    expected.push_back(sum + ok.back() * none_drawn);
  }
  return expected;
}

ReplaySummary summarise_replay(const std::vector<std::vector<double>>& runs, double optimum,
                               const std::vector<double>& random_best, std::vector<std::size_t> budgets) {
  if (runs.empty() || budgets.empty()) throw std::invalid_argument("replay summary: no runs or no budgets");
  const std::size_t top = *std::max_element(budgets.begin(), budgets.end());
  if (random_best.size() < top) throw std::invalid_argument("replay summary: random baseline shorter than the budget");
  std::vector<std::vector<double>> curves;
  for (const auto& run : runs) curves.push_back(best_so_far(run, top));

  ReplaySummary summary;
  for (std::size_t budget : budgets) {
    std::vector<double> fractions;
    for (const auto& curve : curves) fractions.push_back(std::isinf(curve[budget - 1]) ? 0 : optimum / curve[budget - 1]);
    summary.fraction.push_back(median(fractions));
  }
  for (const auto& [name, fraction] : {std::pair{"0.9", 0.9}, {"0.95", 0.95}, {"0.99", 0.99}}) {
    const double target = fraction;  // a lambda may not capture a structured binding (C++20 as clang 14 has it)
    std::vector<double> reached;
    for (const auto& curve : curves) {
      auto hit = std::find_if(curve.begin(), curve.end(), [&](double best) { return optimum / best >= target; });
      reached.push_back(hit == curve.end() ? kNever : static_cast<double>(hit - curve.begin() + 1));
    }
    std::sort(reached.begin(), reached.end());
    const double lower_median = reached[(reached.size() - 1) / 2];
    summary.evals_to[name] = std::isinf(lower_median) ? std::nullopt
                                                      : std::optional<std::size_t>(static_cast<std::size_t>(lower_median));
  }
  const double worst = *std::max_element(random_best.begin(), random_best.begin() + static_cast<long>(top));
  double total = 0;
  std::size_t counted = 0;
  for (std::size_t t = 0; t < top; ++t) {
    double mean = 0;
    for (const auto& curve : curves) mean += std::isinf(curve[t]) ? worst : curve[t];
    mean /= static_cast<double>(curves.size());
    if (random_best[t] <= optimum) continue;  // random search is at the optimum already
    total += (random_best[t] - mean) / (random_best[t] - optimum);
    ++counted;
  }
  if (counted > 0) summary.score = total / static_cast<double>(counted);
  summary.budgets = std::move(budgets);
  return summary;
}

}  // namespace optune::tuner
