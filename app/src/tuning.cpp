#include "optune/app/tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "optune/app/bad_input.hpp"
#include "optune/app/query.hpp"
#include "optune/app/run_locks.hpp"
#include "optune/app/tasks.hpp"
#include "optune/backends/registry.hpp"
#include "optune/measure/device_spread_runner.hpp"
#include "optune/tuner/scheduling/shape_range.hpp"

namespace optune::app {

namespace {

// What can be checked of the request's text before anything is parsed further.
void check_tune_request(const TuneRequest& request) {
  if (request.tuning.trials == 0) throw BadInput("tune: --trials must be at least 1");
  if (!request.budget.empty()) suite_budget(request);  // its syntax, before anything is measured
  if (request.compile_ahead != "auto" && request.compile_ahead != "on" && request.compile_ahead != "off")
    throw BadInput("tune: --compile-ahead must be auto, on or off, not '" + request.compile_ahead + "'");
  try {
    tuner::check_tuner_name(request.tuning.tuner.name);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  if (!request.kernel_file.empty()) {
    if (!request.suite.empty()) throw BadInput("tune: give either --kernel or --suite, not both");
    if (!request.template_name.empty()) throw BadInput("tune: --template does not go with --kernel (the file is the template)");
    if (!request.layout.empty()) throw BadInput("tune: --layout does not go with --kernel");
    if (!request.dtype.empty()) throw BadInput("tune: --dtype goes with --shape or --suite");
    return;
  }
  if (!request.suite.empty()) {
    if (!request.shape.empty()) throw BadInput("tune: give either --suite or --shape, not both");
    if (!request.template_name.empty()) throw BadInput("tune: --template goes with --shape (a suite tunes each layer's default template)");
    return;
  }
  if (request.shape.empty()) throw BadInput("tune: --shape or --suite is required (e.g. --shape 512,512,512)");
  if (!request.layout.empty())
    throw BadInput("tune: --layout goes with --suite (a --shape names its own: layout=nchw8c)");
}

// One workload's tuning options (the plan's, its batch size settled), its --budget applied:
// trials replace tuning.trials; a time bounds the run, alone unless trials were given too.
tuner::TuningOptions workload_tuning(const TuneRequest& request, const TunePlan& plan) {
  tuner::TuningOptions tuning = plan.tuning;
  if (request.budget.empty()) return tuning;
  const tuner::SuiteBudget budget = suite_budget(request);
  if (budget.seconds > 0) {
    tuning.seconds = budget.seconds;
    if (!request.trials_given) tuning.trials = tuner::kUnboundedTrials;
  } else {
    tuning.trials = budget.total_trials;
  }
  return tuning;
}

// The shapes of a --shape: itself, or a range's representative shapes.
std::vector<std::string> request_shapes(const TuneRequest& request, TunePlan& plan) {
  if (plan.kind != TuneKind::kRange) return {request.shape};
  try {
    plan.range_points = tuner::representative_shapes(request.shape).size();
    return tuner::representative_shapes(request.shape, request.tuning.trials);
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("tune: ") + error.what());
  }
}

// What the request's text says, read before any device is looked for: the shapes' workloads, the
// kernel file's backend, the suite file.
std::vector<kernels::Workload> read_workloads(const TuneRequest& request, const std::vector<std::string>& shapes,
                                              TunePlan& plan) {
  std::vector<kernels::Workload> workloads;
  if (plan.kind == TuneKind::kSuite) {
    plan.suite = load_suite_option(request.suite, request.layout, request.dtype);
  } else if (!request.kernel_file.empty()) {
    check_kernel_backend(request.kernel_file, plan.target);
  } else {
    try {
      const kernels::Op op = kernels::parse_op(request.op);
      for (const auto& shape : shapes) workloads.push_back(kernels::parse_workload(op, shape));
    } catch (const std::invalid_argument& error) {
      throw BadInput((plan.kind == TuneKind::kRange ? "tune: " : "") + std::string(error.what()));
    }
  }
  return workloads;
}

// Every task, bound to its template (or kernel file) on the plan's device, each shape with its
// share of the trials or time.
void make_tasks(const TuneRequest& request, const std::vector<std::string>& shapes,
                const std::vector<kernels::Workload>& workloads, TunePlan& plan) {
  if (plan.kind == TuneKind::kSuite) {
    plan.suite_budget = suite_budget(request);
    plan.suite_budget.stop = request.stop;
    for (const auto& entry : plan.suite->entries)
      plan.suite_tasks.push_back({entry, make_entry_task(entry, plan.target, plan.device)});
    return;
  }
  tuner::TuningOptions whole = workload_tuning(request, plan);
  // auto: only where the device is apart from every host's cores. An --rpc CPU server may be this
  // machine (loopback): its worker would time candidates beside the compiles (measured: 21 of 32
  // records noisy, timing 9 s to 14 s), so it takes --compile-ahead on.
  whole.compile_ahead = request.compile_ahead == "on" ||
                        (request.compile_ahead == "auto" &&
                         backends::find_backend(plan.target.backend).measures_devices_at_once());
  const auto trials = tuner::split_trials(whole.trials, shapes.size());
  plan.range_trials = whole.trials;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    ShapeTuning shape{shapes[i],
                      workloads.empty() ? make_kernel_task(request.kernel_file, shapes[i], plan.target, plan.device)
                                        : make_task(workloads[i], plan.target, plan.device, request.template_name),
                      whole};
    if (plan.kind == TuneKind::kRange) {
      shape.tuning.trials = trials[i];
      shape.tuning.seconds = whole.seconds / static_cast<double>(shapes.size());
    }
    plan.shapes.push_back(std::move(shape));
  }
}

}  // namespace

tuner::SuiteBudget suite_budget(const TuneRequest& request) {
  tuner::SuiteBudget budget;
  budget.trials_per_task = request.trials_per_task;
  if (!request.budget.empty()) {
    const bool is_count = request.budget.find_first_not_of("0123456789") == std::string::npos;
    if (is_count && (request.budget.size() > 9 || std::stoll(request.budget) < 1 || std::stoll(request.budget) > kMaxTrials))
      throw BadInput("tune: --budget: trials must be from 1 to " + std::to_string(kMaxTrials) + ", not '" +
                     request.budget + "'");
    try {
      if (is_count) budget.total_trials = std::stoul(request.budget);
      else budget.seconds = tuner::parse_duration(request.budget);
    } catch (const std::exception& error) {
      throw BadInput("tune: --budget: " + std::string(error.what()));
    }
  }
  if (!budget.trials_per_task && !budget.total_trials && !budget.seconds) budget.trials_per_task = request.tuning.trials;
  if (budget.seconds && !budget.total_trials && !budget.trials_per_task)
    budget.total_trials = std::numeric_limits<std::size_t>::max() / 2;  // time alone bounds the run
  return budget;
}

std::size_t batch_size_of(const TuneRequest& request, std::size_t devices) {
  // With one device's batch, its compiles (all at once on the host's cores, while the batch before
  // is measured) take about as long as several devices measure it, and the devices wait for them.
  return request.batch_size_given ? request.tuning.batch_size : request.tuning.batch_size * std::max<std::size_t>(1, devices);
}

TunePlan plan_tune(const TuneRequest& request) {
  check_tune_request(request);
  TunePlan plan;
  plan.measuring = request.measuring;
  plan.database = request.database;
  plan.wait_lock = request.wait_lock;
  plan.tuning = request.tuning;
  plan.tuning.stop = request.stop;
  plan.scheduler = request.scheduler;
  plan.kind = !request.suite.empty()                  ? TuneKind::kSuite
              : tuner::is_shape_range(request.shape) ? TuneKind::kRange
                                                     : TuneKind::kWorkload;
  if (plan.kind == TuneKind::kRange) plan.range = request.shape;
  const auto targets = parse_spread_targets(request.measuring.target, !request.measuring.rpc.empty());
  if (targets.size() > 1) plan.spread = targets;
  plan.tuning.batch_size = batch_size_of(request, plan.spread.size());
  // The builder's and the records' target: for <backend>:all the backend's own ("cuda", its first
  // device), so the records join those of a tune on one GPU; for a list its first.
  plan.target = kernels::split_target(request.measuring.target).spec == "all" ? parse_target_option(targets.front().backend)
                                                                              : targets.front();
  plan.measuring.target = plan.target.str();
  const auto shapes = request_shapes(request, plan);
  const auto workloads = read_workloads(request, shapes, plan);
  plan.remote = find_remote(request.measuring.rpc, request.measuring.token_file, request.measuring.rpc_wait, plan.target);
  plan.device = plan.remote ? plan.remote->device : find_device_option(plan.target);
  check_one_model(plan.spread, plan.device);
  make_tasks(request, shapes, workloads, plan);
  return plan;
}

bool TuneOutcome::stopped() const {
  if (suite) return suite->summary.stopped;
  return std::any_of(shapes.begin(), shapes.end(), [](const auto& shape) { return shape.summary.stopped; });
}

std::size_t TuneOutcome::trials() const {
  if (suite) return suite->summary.trials;
  std::size_t trials = 0;
  for (const auto& shape : shapes) trials += shape.summary.trials;
  return trials;
}

TuneOutcome run(const TunePlan& plan, const InstallPaths& paths, tuner::Progress& progress,
                std::function<void(const std::string&)> log) {
  auto database = open_database(plan.database, db::Database::Mode::kReadWrite);
  auto locks = lock_for_measuring("tune", paths.lock_dir, plan.database, plan.device, plan.wait_lock, true, log);
  Measuring measuring(plan.measuring, plan.target, paths, plan.remote, std::move(log), plan.spread);
  TuneOutcome outcome;
  outcome.kind = plan.kind;
  if (plan.kind == TuneKind::kSuite) {
    tuner::RecordingMeasurer measurer(*measuring.builder, measuring.runner, database);
    auto summary = tuner::tune_suite(plan.suite_tasks, measurer, plan.tuning, plan.suite_budget, plan.scheduler, progress);
    outcome.suite = SuiteOutcome{*plan.suite, std::move(summary)};
  } else {
    tuner::TuningLoop loop(*measuring.builder, measuring.runner, database, progress);
    for (const auto& shape : plan.shapes) {
      outcome.shapes.push_back({shape.task, loop.run(shape.task, shape.tuning)});
      if (outcome.shapes.back().summary.stopped) break;  // the shapes after it are left for the next run
    }
  }
  if (const auto* spread = dynamic_cast<const measure::DeviceSpreadRunner*>(&measuring.runner))
    for (std::size_t i = 0; i < plan.spread.size(); ++i)
      outcome.devices.push_back({plan.spread[i].str(), spread->measured_per_device().at(i)});
  return outcome;
}

namespace {

nlohmann::json optional_record(const std::optional<db::TuningRecord>& record) {
  return record ? record_json(*record) : nlohmann::json(nullptr);
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json comparison_json(const tuner::FinalComparison& comparison) {
  nlohmann::json finalists = nlohmann::json::array();
  for (const auto& finalist : comparison.finalists)
    finalists.push_back({{"role", finalist.role},
                         {"config", finalist.record.config},
                         {"median_seconds", finalist.record.median_seconds},
                         {"spread", optional_number(finalist.record.spread)},
                         {"load", optional_number(finalist.record.load)},
                         {"device_load", optional_number(finalist.record.device_load)},
                         {"winner", finalist.record.winner}});
  const auto& verdict = comparison.verdict;
  return {{"rounds", comparison.rounds},
          {"load", optional_number(verdict.load)},
          {"device_load", optional_number(verdict.device_load)},
          {"tied", verdict.tied},
          {"kept_stored_winner", verdict.kept_stored_winner},
          {"finalists", std::move(finalists)}};
}

// The speed-up as the summary gives it: measured by the final comparison where it ran (a number
// only where it can be trusted, else null and why), else from the records.
void add_speedup(nlohmann::json& json, const tuner::TuningSummary& summary) {
  const bool best_is_default = summary.best_is_default();
  json["speedup"] = nullptr;
  json["speedup_interval"] = nullptr;
  json["speedup_source"] = nullptr;
  json["unreliable"] = nullptr;
  json["comparison"] = summary.comparison ? comparison_json(*summary.comparison) : nlohmann::json(nullptr);
  if (best_is_default) return;
  if (const auto compared = summary.compared_speedup()) {
    json["speedup_source"] = "final comparison";
    json["speedup_interval"] = {compared->ratio.low, compared->ratio.high};
    if (compared->unreliable.empty()) json["speedup"] = compared->ratio.value;
    else json["unreliable"] = compared->unreliable;
    return;
  }
  if (summary.speedup() > 0) {
    json["speedup_source"] = "records";
    const std::string doubt = summary.records_speedup_doubt();
    if (doubt.empty()) json["speedup"] = summary.speedup();
    else json["unreliable"] = doubt;
  }
}

nlohmann::json summary_json(const tuner::TuningSummary& summary) {
  nlohmann::json json = {{"trials", summary.trials},
                         {"exhausted", summary.exhausted},
                         {"failures", summary.failures},
                         {"noisy", summary.noisy},
                         {"noisy_remeasured", summary.noisy_remeasured},
                         {"noisy_now_quiet", summary.noisy_now_quiet},
                         {"already_recorded", summary.already_recorded},
                         {"stopped", summary.stopped},
                         {"seconds", summary.seconds},
                         {"tuner", summary.tuner},
                         {"tuner_seconds", summary.overhead_seconds},
                         {"transfer_records", summary.transfer_records},
                         {"other_device_records", summary.other_device_records},
                         {"default", optional_record(summary.default_config)},
                         {"best", optional_record(summary.best)},
                         {"best_is_default", summary.best_is_default()},
                         {"run_id", summary.run_id},
                         {"slow", summary.time.slow},
                         // Where `seconds` went; `saved_seconds` is timing spared, not part of them.
                         {"time", {{"building", summary.time.building},
                                   {"checking", summary.time.checking},
                                   {"timing", summary.time.timing},
                                   {"choosing", summary.overhead_seconds},
                                   {"waiting", summary.waiting_seconds()},
                                   {"saved_seconds", summary.time.saved},
                                   {"reused_builds", summary.time.reused}}}};
  add_speedup(json, summary);
  return json;
}

}  // namespace

nlohmann::json outcome_json(const WorkloadOutcome& outcome) {
  auto json = summary_json(outcome.summary);
  json["workload"] = outcome.task->workload.key();
  json["template"] = outcome.task->kernel_template->name();
  json["target"] = outcome.task->target.str();
  json["device"] = outcome.task->device.name;
  return json;
}

nlohmann::json outcome_json(const TuneOutcome& outcome) {
  nlohmann::json devices = nullptr;
  for (const auto& device : outcome.devices) devices[device.target] = device.candidates;
  const auto with_devices = [&](nlohmann::json json) {
    json["devices"] = devices;
    return json;
  };
  if (outcome.suite) return with_devices(outcome_json(*outcome.suite));
  if (outcome.kind == TuneKind::kWorkload) return with_devices(outcome_json(outcome.shapes.front()));
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& shape : outcome.shapes) shapes.push_back(with_devices(outcome_json(shape)));
  return shapes;
}

nlohmann::json outcome_json(const SuiteOutcome& outcome) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& task : outcome.summary.tasks) {
    auto json = summary_json(task.summary);
    json["name"] = task.entry.name;
    json["count"] = task.entry.count;
    json["workload"] = task.entry.workload.key();
    json["started"] = task.started;
    tasks.push_back(std::move(json));
  }
  auto finite = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"suite", outcome.suite.name},
          {"tasks", std::move(tasks)},
          {"trials", outcome.summary.trials},
          {"seconds", outcome.summary.seconds},
          {"default_seconds", finite(outcome.summary.default_seconds)},
          {"tuned_seconds", finite(outcome.summary.tuned_seconds)}};
}

}  // namespace optune::app
