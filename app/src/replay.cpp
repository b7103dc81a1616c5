#include "optune/app/replay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <unordered_set>

#include "optune/app/bad_input.hpp"
#include "optune/tuner/search/strategies.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::app {
namespace {

std::set<std::string> knob_names(const tuner::LandscapeFile& file) {
  std::set<std::string> names;
  for (const auto& knob : file.task->space.knobs())
    names.insert(std::visit([](const auto& k) { return k.name; }, knob));
  return names;
}

// Other devices' landscapes of the same kernel, as the records the model starts from. Parameters
// match by name, in any order. The model reads a record in the target's space or passes it over,
// so a source that shares no configuration with the target (other values, strings for numbers)
// would be passed over whole without a word: it is refused.
tuner::TaskHistory transfer_history(const tuner::LandscapeFile& target, const std::vector<std::string>& files) {
  const std::unordered_set<search_space::Config, search_space::ConfigHash> measured(target.configs.begin(),
                                                                                    target.configs.end());
  tuner::TaskHistory history;
  for (const auto& path : files) {
    auto source = tuner::read_landscape_file(path);
    if (knob_names(source) != knob_names(target))
      throw BadInput("replay: --transfer-from " + path + " has other tunable parameters than " + target.name);
    if (tuner::landscape_device(source) == tuner::landscape_device(target))
      throw BadInput("replay: --transfer-from " + path + " was measured on the same device (" +
                     tuner::landscape_device(source) + ")");
    auto records = tuner::landscape_records(source);
    const bool shared = std::any_of(records.begin(), records.end(), [&](const db::TuningRecord& record) {
      const auto config = tuner::readable_config(target.task->space, record);
      return config && measured.contains(*config);
    });
    if (!shared) throw BadInput("replay: --transfer-from " + path + " shares no configuration with " + target.name);
    for (auto& record : records) history.other_devices.push_back(std::move(record));
  }
  return history;
}

TunerReport replay_tuner(const tuner::LandscapeFile& file, const tuner::Landscape& landscape, const std::string& name,
                         const ReplayRequest& request, const std::vector<double>& random_best,
                         const tuner::TaskHistory& history) {
  const std::size_t top = *std::max_element(request.budgets.begin(), request.budgets.end());
  std::vector<std::vector<double>> runs;
  double overhead = 0, evaluations = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t seed = request.first_seed; seed < request.first_seed + request.seeds; ++seed) {
    auto result = tuner::replay(landscape, name, seed, top, request.batch_size, landscape.best, history);
    std::vector<double> times;
    for (double throughput : result.evaluated) times.push_back(throughput > 0 ? 1.0 / throughput : std::nan(""));
    runs.push_back(std::move(times));
    overhead += result.overhead_seconds;
    evaluations += static_cast<double>(result.evaluated.size());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {name, tuner::summarise_replay(runs, file.optimum, random_best, request.budgets),
          evaluations > 0 ? overhead / evaluations : 0, wall / static_cast<double>(request.seeds)};
}

}  // namespace

std::vector<std::string> replay_tuners(const std::vector<std::string>& names) {
  if (names.size() == 1 && names.front() == "all") return tuner::tuner_names();
  if (names.empty()) throw BadInput("replay: --tuner is empty");
  std::vector<std::string> tuners;
  for (const auto& name : names) {
    try {
      tuner::check_tuner_name(name);
    } catch (const std::invalid_argument& error) {
      throw BadInput(error.what());
    }
    if (std::find(tuners.begin(), tuners.end(), name) == tuners.end()) tuners.push_back(name);
  }
  return tuners;
}

void replay_landscape(const ReplayRequest& request,
                      const std::function<void(const tuner::LandscapeFile&, const TunerReport&)>& on_report) {
  if (request.landscape.empty()) throw BadInput("replay: --landscape is required");
  if (request.seeds < 1 || request.seeds > 100000) throw BadInput("replay: --seeds must be from 1 to 100000");
  if (request.first_seed < 1 || request.first_seed > 1000000000)
    throw BadInput("replay: --first-seed must be from 1 to 1000000000");
  if (request.batch_size < 1 || request.batch_size > 4096) throw BadInput("replay: --batch-size must be from 1 to 4096");
  if (request.budgets.empty()) throw BadInput("replay: --budgets is empty");
  for (std::size_t budget : request.budgets)
    if (budget < 1 || budget > 1000000)
      throw BadInput("replay: --budgets takes positive integers up to 1000000 (got " + std::to_string(budget) + ")");
  const auto tuners = replay_tuners(request.tuners);
  tuner::LandscapeFile file;
  tuner::TaskHistory history;
  try {
    file = tuner::read_landscape_file(request.landscape);
    history = transfer_history(file, request.transfer_from);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  const auto landscape = tuner::replay_landscape(file);
  const std::size_t top = *std::max_element(request.budgets.begin(), request.budgets.end());
  if (top > file.configs.size())
    throw BadInput("replay: a budget of " + std::to_string(top) + " exceeds the landscape's " +
                   std::to_string(file.configs.size()) + " configurations");
  const auto random_best = tuner::random_search_expected_best(file.times, top);
  for (const auto& name : tuners) on_report(file, replay_tuner(file, landscape, name, request, random_best, history));
}

nlohmann::ordered_json replay_json(const tuner::LandscapeFile& file, const TunerReport& report, std::size_t seeds) {
  nlohmann::ordered_json evals_to = nlohmann::ordered_json::object();
  for (const char* target : {"0.9", "0.95", "0.99"}) {
    const auto& evals = report.summary.evals_to.at(target);
    evals_to[target] = evals ? nlohmann::ordered_json(*evals) : nlohmann::ordered_json(nullptr);
  }
  auto rounded = [](double value) { return std::round(value * 1e4) / 1e4; };
  nlohmann::ordered_json fraction = nlohmann::ordered_json::array();
  for (double value : report.summary.fraction) fraction.push_back(rounded(value));
  return {{"landscape", file.name}, {"tuner", report.tuner},       {"seeds", seeds},
          {"budgets", report.summary.budgets}, {"fraction", fraction}, {"evals_to", evals_to},
          {"score", report.summary.score ? nlohmann::ordered_json(rounded(*report.summary.score))
                                         : nlohmann::ordered_json(nullptr)}};
}

}  // namespace optune::app
