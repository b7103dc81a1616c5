#include "optune/tuner/scheduling/final_comparison.hpp"

#include <fmt/format.h>

#include "optune/measure/median_interval.hpp"
#include "optune/tuner/results/output_text.hpp"

namespace optune::tuner {

std::optional<RatioInterval> round_ratio(const measure::MeasureResult& numerator,
                                         const measure::MeasureResult& denominator) {
  if (!numerator.ok() || !denominator.ok()) return std::nullopt;
  const auto& top = numerator.round_medians;
  const auto& bottom = denominator.round_medians;
  if (top.empty() || top.size() != bottom.size()) return std::nullopt;
  std::vector<double> ratios;
  for (std::size_t round = 0; round < top.size(); ++round) {
    if (!(bottom[round] > 0)) return std::nullopt;
    ratios.push_back(top[round] / bottom[round]);
  }
  const measure::Interval interval = measure::median_interval(ratios);
  return RatioInterval{measure::median(ratios), interval.low, interval.high};
}

namespace {

std::optional<std::size_t> fastest(const std::vector<measure::MeasureResult>& results,
                                   std::optional<std::size_t> except = std::nullopt) {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok() || i == except) continue;
    if (!found || results[i].median_seconds < results[*found].median_seconds) found = i;
  }
  return found;
}

// `a` beats `b` beyond noise: a's time is below b's in the rounds' interval as a whole.
bool beats(const measure::MeasureResult& a, const measure::MeasureResult& b) {
  const auto ratio = round_ratio(b, a);
  return ratio && ratio->low > 1;
}

// The successful results' mean of one share (load, device_load); nullopt where one is unknown.
std::optional<double> mean_share(const std::vector<measure::MeasureResult>& results,
                                 std::optional<double> measure::MeasureResult::*share) {
  double sum = 0;
  int count = 0;
  for (const auto& result : results) {
    if (!result.ok()) continue;
    if (!(result.*share)) return std::nullopt;
    sum += *(result.*share);
    ++count;
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

}  // namespace

FinalVerdict judge_finalists(const std::vector<measure::MeasureResult>& results,
                             std::optional<std::size_t> default_index, std::optional<std::size_t> stored_winner) {
  FinalVerdict verdict;
  verdict.load = mean_share(results, &measure::MeasureResult::load);
  verdict.device_load = mean_share(results, &measure::MeasureResult::device_load);
  verdict.winner = fastest(results);
  if (!verdict.winner) return verdict;
  if (stored_winner && *stored_winner != *verdict.winner && results[*stored_winner].ok() &&
      !beats(results[*verdict.winner], results[*stored_winner])) {
    verdict.winner = stored_winner;
    verdict.kept_stored_winner = true;
  }
  const auto& winner = results[*verdict.winner];
  verdict.runner_up = fastest(results, verdict.winner);
  if (verdict.runner_up) verdict.tied = !beats(winner, results[*verdict.runner_up]);
  if (default_index && *default_index != *verdict.winner)
    verdict.speedup = round_ratio(results[*default_index], winner);
  if (verdict.speedup)
    verdict.unreliable = speedup_doubt(*verdict.speedup, verdict.load, verdict.device_load, winner.round_medians.size());
  return verdict;
}

std::string speedup_doubt(const RatioInterval& speedup, std::optional<double> load, std::optional<double> device_load,
                          std::size_t rounds) {
  if (db::is_busy(load, device_load))
    return "the machine was busy (" + db::busy_text(load, device_load) + " while the finalists were re-measured)";
  if (speedup.spread() > kMaxSpeedupSpread)
    return fmt::format("the machine was busy (the speed-up measured {} to {} across {} interleaved rounds)",
                       speedup_text(speedup.low), speedup_text(speedup.high), rounds);
  return "";
}

std::optional<ComparedSpeedup> FinalComparison::speedup_of(const std::string& config_text) const {
  std::optional<std::size_t> index, default_index;
  for (std::size_t i = 0; i < finalists.size(); ++i) {
    if (finalists[i].record.config_text() == config_text) index = i;
    if (finalists[i].role == "default") default_index = i;
  }
  if (!index || !default_index || index == default_index) return std::nullopt;
  if (index == verdict.winner) {
    if (!verdict.speedup) return std::nullopt;
    return ComparedSpeedup{*verdict.speedup, verdict.unreliable};
  }
  const auto& result = finalists[*index].result;
  const auto ratio = round_ratio(finalists[*default_index].result, result);
  if (!ratio) return std::nullopt;
  std::string doubt = speedup_doubt(*ratio, verdict.load, verdict.device_load, result.round_medians.size());
  if (doubt.empty()) doubt = "the final comparison measured another config fastest";
  return ComparedSpeedup{*ratio, doubt};
}

const db::TuningRecord* FinalComparison::winner() const {
  return verdict.winner ? &finalists[*verdict.winner].record : nullptr;
}

const db::TuningRecord* FinalComparison::runner_up() const {
  return verdict.runner_up ? &finalists[*verdict.runner_up].record : nullptr;
}

}  // namespace optune::tuner
