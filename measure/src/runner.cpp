#include "optune/measure/runner.hpp"

#include <algorithm>
#include <filesystem>

namespace optune::measure {
namespace {

// Adds a later round's measurement of a candidate to what its earlier rounds gave.
void merge_round(MeasureResult& merged, MeasureResult round, const MeasureInput& input) {
  if (!round.ok()) {
    round.build_seconds = merged.build_seconds;
    merged = std::move(round);
    return;
  }
  const auto earlier_rounds = static_cast<double>(merged.round_medians.size());
  // The mean over rounds: one busy moment does not stand for a whole comparison, nor is it lost in it.
  const auto mean_over_rounds = [&](std::optional<double>& merged_share, std::optional<double> round_share) {
    if (merged_share && round_share)
      merged_share = (*merged_share * earlier_rounds + *round_share) / (earlier_rounds + 1);
    else
      merged_share.reset();
  };
  const auto sum_over_rounds = [](std::optional<double>& merged_seconds, std::optional<double> round_seconds) {
    if (round_seconds) merged_seconds = merged_seconds.value_or(0) + *round_seconds;
  };
  sum_over_rounds(merged.check_seconds, round.check_seconds);
  sum_over_rounds(merged.timing_seconds, round.timing_seconds);
  // The worst check over the rounds: a device's output may differ from run to run.
  if (round.check_error) merged.check_error = std::max(merged.check_error.value_or(0), *round.check_error);
  merged.saved_seconds += round.saved_seconds;
  mean_over_rounds(merged.load, round.load);
  mean_over_rounds(merged.device_load, round.device_load);
  merged.round_medians.push_back(round.median_seconds);
  merged.costs.insert(merged.costs.end(), round.costs.begin(), round.costs.end());
  merged.median_seconds = median(merged.costs);
  merged.gflops = input.task->workload.flops() / merged.median_seconds / 1e9;
  merged.timestamp = round.timestamp;
}

}  // namespace

std::vector<MeasureResult> Runner::run(const std::vector<MeasureInput>& inputs,
                                       const std::vector<BuildResult>& builds, int rounds) {
  return run(inputs, builds, rounds, rounds, {});
}

std::vector<MeasureResult> Runner::run(const std::vector<MeasureInput>& inputs,
                                       const std::vector<BuildResult>& builds, int rounds, int max_rounds,
                                       const MoreRounds& more, Rounds kind) {
  const int most_rounds = std::max(rounds, max_rounds);
  comparing_ = most_rounds > 1;
  rounds_kind_ = kind;
  std::vector<MeasureResult> results(inputs.size());
  for (int round = 0; round < most_rounds;) {
    if (round > 0) {
      const bool wanted = more && more(results);
      if (round >= rounds && !wanted) break;
    }
    // The first round measures every input; later ones those that have not failed.
    std::vector<std::size_t> measured_inputs;
    std::vector<MeasureInput> again;
    std::vector<BuildResult> again_builds;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (round > 0 && !results[i].ok()) continue;
      measured_inputs.push_back(i);
      again.push_back(inputs[i]);
      again_builds.push_back(builds[i]);
    }
    if (again.empty()) break;
    for (auto& measured : measure_rounds(again, again_builds, most_rounds - round)) {
      for (std::size_t j = 0; j < measured_inputs.size(); ++j) {
        MeasureResult& result = results[measured_inputs[j]];
        if (round == 0) {
          result = std::move(measured[j]);
          if (result.ok()) result.round_medians = {result.median_seconds};
        } else if (result.ok()) {
          merge_round(result, std::move(measured[j]), inputs[measured_inputs[j]]);
        }
      }
      ++round;
    }
  }
  if (remove_artifacts_) {
    for (const auto& build : builds) {
      std::error_code ignored;
      if (!build.artifact.empty() && !build.kept) std::filesystem::remove(build.artifact, ignored);
    }
  }
  return results;
}

}  // namespace optune::measure
