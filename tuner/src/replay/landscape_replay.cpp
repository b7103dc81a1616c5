#include "optune/tuner/replay/landscape_replay.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "optune/backends/registry.hpp"
#include "optune/tuner/search/candidate_pool.hpp"
#include "optune/tuner/search/strategies.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {

std::vector<Landscape> load_landscapes(const db::Database& database, const std::string& tuner_name) {
  std::map<std::string, std::vector<db::TuningRecord>> by_workload;
  for (auto& record : database.records({})) by_workload[record.workload_key].push_back(std::move(record));
  std::vector<Landscape> landscapes;
  for (auto& [key, records] : by_workload) {
    Landscape landscape;
    landscape.task = std::make_shared<measure::MeasureTask>();
    auto& task = *landscape.task;
    task.workload = kernels::parse_workload_key(key);
    task.kernel_template = &backends::template_of_record(records.front().template_name, records.front().config);
    task.device = kernels::DeviceInfo::from_fingerprint(records.front().device_fingerprint);
    task.space = task.kernel_template->space(task.workload, task.device);
    std::set<std::string> seen;
    double first = records.front().timestamp, last = first;
    for (const auto& record : records) {
      first = std::min(first, record.timestamp);
      last = std::max(last, record.timestamp);
      if (record.tuner != tuner_name || !seen.insert(record.config_text()).second) continue;
      landscape.configs.push_back(task.space.from_json(record.config));
      landscape.gflops.push_back(record.ok() ? record.gflops : 0.0);
      landscape.records.push_back(record);
    }
    if (landscape.configs.empty()) continue;
    landscape.best = *std::max_element(landscape.gflops.begin(), landscape.gflops.end());
    landscape.live_seconds = last - first;
    landscapes.push_back(std::move(landscape));
  }
  return landscapes;
}

ReplayResult replay(const Landscape& landscape, const std::string& tuner_name, std::uint64_t seed,
                    std::size_t budget, std::size_t batch_size, double target_gflops,
                    const TaskHistory& history) {
  std::map<std::vector<std::uint32_t>, double> recorded;
  for (std::size_t i = 0; i < landscape.configs.size(); ++i)
    recorded[landscape.configs[i].options] = landscape.gflops[i];
  TunerOptions options;
  options.name = tuner_name;
  options.seed = seed;
  options.transfer = !history.related.empty() || !history.other_devices.empty();
  options.pool = std::make_shared<const CandidatePool>(landscape.configs);
  auto tuner = make_tuner(options, *landscape.task, history);
  ReplayResult result;
  double best = 0;
  while (result.best_so_far.size() < budget) {
    auto batch = tuner->next_batch(std::min(batch_size, budget - result.best_so_far.size()));
    if (batch.empty()) break;
    std::vector<measure::MeasureResult> results;
    for (const auto& config : batch) {
      measure::MeasureResult answer;
      answer.gflops = recorded.at(config.options);
      if (answer.gflops <= 0) answer.error = measure::ErrorKind::kRuntimeError;
      best = std::max(best, answer.gflops);
      result.evaluated.push_back(answer.gflops);
      result.best_so_far.push_back(best);
      if (!result.trials_to_target && best >= target_gflops) result.trials_to_target = result.best_so_far.size();
      results.push_back(answer);
    }
    tuner->update(batch, results);
  }
  result.overhead_seconds = tuner->overhead_seconds();
  return result;
}

}  // namespace optune::tuner
