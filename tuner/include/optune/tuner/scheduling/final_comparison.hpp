// The closing comparison of a tuning run, which the summary's speed-up and the stored winner come
// from: the default config, the best, the runner-up and (where it is another config) the winner an
// earlier run stored are measured again through the real runner, interleaved (A B C D, A B C D,
// ...), at least kMinFinalRounds times and, while the best two are tied or the speed-up is not
// yet known to +-kMaxSpeedupSpread, up to kMaxFinalRounds. Every ratio is taken within one round,
// so a slow spell of a shared machine falls on both sides of it; the interval of the ratios'
// median (measure/median_interval.hpp) is the speed-up's. A machine busy beyond db::kBusyLoad
// meanwhile, or an interval still too wide, makes the speed-up unreliable: no number is given.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optune/db/tuning_record.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::tuner {

inline constexpr int kMinFinalRounds = 5;
inline constexpr int kMaxFinalRounds = 11;
// The widest relative half-width of a speed-up's interval that is printed as a number.
inline constexpr double kMaxSpeedupSpread = 0.05;

// A ratio of two configs' times, from their rounds: value is the median of the per-round ratios.
struct RatioInterval {
  double value = 0;
  double low = 0;
  double high = 0;
  double spread() const { return value > 0 ? (high - low) / 2 / value : 0; }
};

// numerator's round medians over denominator's, round by round; nullopt unless both succeeded in
// the same rounds.
std::optional<RatioInterval> round_ratio(const measure::MeasureResult& numerator,
                                         const measure::MeasureResult& denominator);

// What the rounds say about finalists measured together (indexes into their results).
struct FinalVerdict {
  std::optional<std::size_t> winner;
  std::optional<std::size_t> runner_up;  // the fastest other finalist
  bool tied = false;                     // the winner's lead over the runner-up is within noise
  bool kept_stored_winner = false;       // a faster finalist did not beat the stored winner beyond noise
  std::optional<RatioInterval> speedup;  // default / winner; none when the winner is the default
  std::optional<double> load;            // the finalists' mean load over their rounds
  std::optional<double> device_load;     // and their mean device load (a GPU shared with others)
  std::string unreliable;                // why the speed-up is not to be trusted; "" when it is
  // Another round could still settle a tie or narrow the speed-up (or find the machine quiet).
  bool is_unsettled() const { return tied || !unreliable.empty(); }
};

// The fastest finalist wins, unless `stored_winner` (an earlier run's) is among them and the
// fastest does not beat it beyond noise: then the stored winner stays.
FinalVerdict judge_finalists(const std::vector<measure::MeasureResult>& results,
                             std::optional<std::size_t> default_index, std::optional<std::size_t> stored_winner);

// Why a speed-up measured in these rounds is not to be trusted: the machine busy meanwhile, or its
// interval wider than +-kMaxSpeedupSpread; "" where it is.
std::string speedup_doubt(const RatioInterval& speedup, std::optional<double> load, std::optional<double> device_load,
                          std::size_t rounds);

// One finalist's speed-up over the default from the comparison's rounds, and why it is not to be
// trusted ("" where it is).
struct ComparedSpeedup {
  RatioInterval ratio;
  std::string unreliable;
};

// The closing comparison as the summary reports it.
struct FinalComparison {
  struct Finalist {
    std::string role;               // "default", "best", "runner-up", "stored winner"
    db::TuningRecord record;        // its record of this comparison (tuner "final")
    measure::MeasureResult result;  // its rounds
  };
  std::vector<Finalist> finalists;
  int rounds = 0;
  FinalVerdict verdict;
  const db::TuningRecord* winner() const;
  const db::TuningRecord* runner_up() const;
  // The speed-up over the default of the finalist whose config `config_text` is: the verdict's for
  // the winner; for another (the summary's best where a busy machine kept the winner unmarked),
  // its own rounds' ratio, unreliable since the rounds found it no winner. nullopt where that
  // config or the default is no finalist, or is the default.
  std::optional<ComparedSpeedup> speedup_of(const std::string& config_text) const;
};

}  // namespace optune::tuner
