// Replaying tuners against an exhaustively measured landscape file (Kernel Tuner cache or T4
// results) over many seeds, as `optune replay` and optune.replay() ask for it: per tuner the
// median fraction of the optimum per budget, the evaluations to 90/95/99% and the methodology
// score (tuner/replay_summary.hpp). Nothing is measured: every evaluation comes from the file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/tuner/replay/landscape_file.hpp"
#include "optune/tuner/replay/replay_summary.hpp"

namespace optune::app {

struct ReplayRequest {
  std::string landscape;
  std::vector<std::string> tuners = {"xgb"};  // or {"all"}
  std::size_t seeds = 20;
  std::vector<std::size_t> budgets = {25, 50, 100, 200, 400};
  std::size_t batch_size = 1;  // as Kernel Tuner evaluates
  std::vector<std::string> transfer_from;  // landscapes of the same kernel on other devices
  std::size_t first_seed = 1;  // seeds first_seed .. first_seed + seeds - 1: other sets show the spread
};

struct TunerReport {
  std::string tuner;
  tuner::ReplaySummary summary;
  double seconds_per_decision = 0;  // the tuner's own time (model fits, ranking) per evaluation
  double wall_seconds_per_seed = 0;
};

// The tuners a request names, each once in the order named ({"all"}: every tuner). Throws
// BadInput for an unknown one or none.
std::vector<std::string> replay_tuners(const std::vector<std::string>& names);

// Checks the request and reads the files (BadInput for anything wrong), then replays each tuner,
// handing each report to `on_report` as it is done.
void replay_landscape(const ReplayRequest& request,
                      const std::function<void(const tuner::LandscapeFile&, const TunerReport&)>& on_report);

// {landscape, tuner, seeds, budgets, fraction, evals_to: {"0.9", "0.95", "0.99"}, score}.
nlohmann::ordered_json replay_json(const tuner::LandscapeFile& file, const TunerReport& report, std::size_t seeds);

}  // namespace optune::app
