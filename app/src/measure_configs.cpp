#include "optune/app/measure_configs.hpp"

#include <algorithm>

#include "optune/app/bad_input.hpp"
#include "optune/app/pick.hpp"
#include "optune/app/run_locks.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/scheduling/task_session.hpp"

namespace optune::app {
namespace {

struct Wanted {
  std::string source;
  search_space::Config config;
};

// A config given as JSON text, as a point of the task's space; BadInput where it is none.
search_space::Config given_config(const measure::MeasureTask& task, const std::string& text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw BadInput("measure: --config is not JSON: " + one_line(text));
  }
  if (!json.is_object()) throw BadInput("measure: --config must be a JSON object of knob values, not " + one_line(text));
  search_space::Config config;
  try {
    config = task.space.from_json(json);
  } catch (const std::invalid_argument& error) {
    throw BadInput("measure: --config " + json.dump() + ": " + error.what());
  }
  if (const std::string broken = task.space.first_violation(config); !broken.empty())
    throw BadInput("measure: --config " + json.dump() + " breaks the rule \"" + broken + "\" of " +
                   task.kernel_template->name() + " on this shape and device");
  return config;
}

// The config `optune pick` gives for the request's workload, from the database.
Wanted picked_config(const MeasureRequest& request, const measure::MeasureTask& task) {
  if (!request.kernel_file.empty()) throw BadInput("measure: --from pick takes --op and --shape, not --kernel");
  PickRequest pick_request{request.database, request.op, request.shape, request.measuring.target, ""};
  const Pick pick = pick_config(pick_request);
  if (pick.template_name != task.kernel_template->name())
    throw BadInput("measure: pick's config is of template " + pick.template_name + ", not " +
                   task.kernel_template->name() + " (give --template " + pick.template_name + ")");
  return {"pick: " + std::string(pick_source_name(pick.source)), task.space.from_json(pick.config)};
}

}  // namespace

MeasureOutcome measure_configs(const MeasureRequest& request, const InstallPaths& paths,
                               std::function<void(const std::string&)> log) {
  if (request.configs.empty() && !request.with_default && !request.from_pick)
    throw BadInput("measure: nothing to measure: give --config JSON, --default or --from pick");
  if (request.rounds < 1 || request.rounds > kMaxMeasureRounds)
    throw BadInput("measure: --rounds must be from 1 to " + std::to_string(kMaxMeasureRounds));
  if (request.kernel_file.empty() && request.shape.empty()) throw BadInput("measure: --shape is required (e.g. --shape 512,512,512)");
  auto remote = find_remote(request.measuring);
  const kernels::DeviceInfo* device = remote ? &remote->device : nullptr;
  std::shared_ptr<measure::MeasureTask> task =
      request.kernel_file.empty()
          ? make_task(request.op, request.shape, request.measuring.target, nullptr, device, request.template_name)
          : make_kernel_task(request.kernel_file, request.shape, request.measuring.target, device);

  std::vector<Wanted> wanted;
  auto want = [&](Wanted next) {
    // A config named twice is measured once, under both names.
    const auto same = std::find_if(wanted.begin(), wanted.end(), [&](const Wanted& w) { return w.config == next.config; });
    if (same == wanted.end()) wanted.push_back(std::move(next));
    else if (same->source.find(next.source) == std::string::npos) same->source += ", " + next.source;
  };
  for (const auto& text : request.configs) want({"given", given_config(*task, text)});
  if (request.with_default)
    want({"default", task->kernel_template->default_config(task->workload, task->device, task->space)});
  if (request.from_pick) want(picked_config(request, *task));

  auto database = open_database(request.database, db::Database::Mode::kReadWrite);
  auto locks = lock_for_measuring("measure", paths.lock_dir, request.database, task->device, request.wait_lock, true, log);
  Measuring measuring(request.measuring, paths, remote, std::move(log));
  tuner::RecordingMeasurer measurer(*measuring.builder, measuring.runner, database);
  std::vector<search_space::Config> configs;
  for (const auto& w : wanted) configs.push_back(w.config);
  std::vector<measure::MeasureResult> results;
  auto records = measurer.run(task, configs, "measure", tuner::make_run_id(), false, &results, request.rounds);
  const search_space::Config default_config =
      task->kernel_template->default_config(task->workload, task->device, task->space);
  for (std::size_t i = 0; i < records.size(); ++i) records[i].is_default = configs[i] == default_config;
  measurer.record(records);

  MeasureOutcome outcome{task, request.rounds, {}};
  for (std::size_t i = 0; i < records.size(); ++i)
    outcome.configs.push_back({wanted[i].source, records[i].config, records[i],
                               measure::median_interval(results[i].costs)});
  return outcome;
}

}  // namespace optune::app
