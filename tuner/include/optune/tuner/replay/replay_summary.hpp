// ReplaySummary: how well a tuner searched a measured landscape, over seeds, in the field's terms
// (what `optune replay` prints and tests/bench/kernel_tuner_replay.py computes for Kernel Tuner):
//  - fraction of the optimum after B unique evaluations: optimum time / best time found, the
//    median over seeds (0 while nothing succeeded);
//  - evaluations to 90 / 95 / 99% of the optimum: the lower median over seeds, none where fewer
//    than half of the seeds got there;
//  - the methodology score of Willemsen et al. (FGCS 2024, "A methodology for comparing
//    optimisation algorithms for auto-tuning"): the mean over seeds of the best time after t
//    evaluations, standardised per t as (random(t) - mean(t)) / (random(t) - optimum), where
//    random(t) is the expected best time of random search without replacement after t draws,
//    calculated exactly from the landscape (a failed configuration is a draw that finds
//    nothing); then averaged over t = 1 .. the largest budget. 0 is random search, 1 the optimum
//    from the first evaluation on, below 0 worse than random. A t where random(t) is the optimum
//    already (a landscape of one successful configuration: a failed draw counts as the worst
//    time) has no term; with no term at all the score is undefined.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optune::tuner {

struct ReplaySummary {
  std::vector<std::size_t> budgets;
  std::vector<double> fraction;  // one per budget
  std::map<std::string, std::optional<std::size_t>> evals_to;  // "0.9", "0.95", "0.99"
  std::optional<double> score;  // none: undefined (no t had a term)
};

// Expected best time of random search without replacement after 1 .. max_draws draws from
// `times` (NaN: a failed configuration, found as the worst time when nothing else was drawn).
std::vector<double> random_search_expected_best(const std::vector<double>& times, std::size_t max_draws);

// `runs`: per seed, the time of each unique evaluation in order (NaN for a failed one).
ReplaySummary summarise_replay(const std::vector<std::vector<double>>& runs, double optimum,
                               const std::vector<double>& random_best, std::vector<std::size_t> budgets);

}  // namespace optune::tuner
