#include "optune/app/dispatch.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>

#include "optune/app/bad_input.hpp"
#include "optune/app/measure_configs.hpp"
#include "optune/app/run_locks.hpp"
#include "optune/app/tasks.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/operator_catalog.hpp"
#include "optune/tuner/results/nearest_config.hpp"
#include "optune/tuner/search/record_check.hpp"
#include "optune/tuner/results/stored_dispatch.hpp"
#include "optune/tuner/scheduling/shape_range.hpp"
#include "optune/tuner/scheduling/task_session.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::app {
namespace {

using TaskPointer = std::shared_ptr<const measure::MeasureTask>;


// The shapes a dispatch is measured on, the range they span and those it is validated on.
struct RangeShapes {
  std::vector<std::string> sampled;  // --shape texts
  std::vector<std::string> held_out;
  kernels::Workload base;            // the first sampled shape's workload
  kernels::ExtentValues low, high;
  bool is_range = false;             // one range given (else a list of shapes)
};

RangeShapes shapes_of(const DispatchRequest& request) {
  RangeShapes shapes;
  const auto& given = request.shapes;
  if (given.empty())
    throw BadInput("dispatch: --shape is required: a range (M=1..2048,N=768,K=768) or two shapes or more");
  const bool is_range = shapes.is_range = given.size() == 1 && tuner::is_shape_range(given[0]);
  kernels::Op op;
  try {
    op = kernels::parse_op(request.tune.op);
    if (is_range) {
      shapes.sampled = tuner::dispatch_shapes(given[0], request.samples);
    } else if (given.size() < 2) {
      throw BadInput("dispatch: one shape is no range: give an extent as LOW..HIGH, or two shapes or more");
    } else {
      for (const auto& shape : given)
        if (tuner::is_shape_range(shape)) throw BadInput("dispatch: give one range or a list of shapes, not both");
      shapes.sampled = given;
    }
    shapes.held_out = !request.held_out.empty() ? request.held_out
                      : is_range ? tuner::held_out_shapes(given[0], request.held_out_count, shapes.sampled)
                                               : std::vector<std::string>{};
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("dispatch: ") + error.what());
  }
  const auto& entry = kernels::operator_entry(op);
  std::vector<std::string> keys;
  std::vector<std::string> distinct;
  for (const auto& text : shapes.sampled) {
    kernels::Workload workload;
    try {
      workload = kernels::parse_workload(op, text);
    } catch (const std::invalid_argument& error) {
      throw BadInput(std::string("dispatch: ") + error.what());
    }
    if (keys.empty()) shapes.base = workload;
    if (!tuner::is_same_kind(workload, shapes.base))
      throw BadInput("dispatch: the shapes are not of one kind (" + shapes.base.key() + " and " + workload.key() +
                     "): give one dtype and layout");
    if (std::find(keys.begin(), keys.end(), workload.key()) != keys.end()) continue;
    keys.push_back(workload.key());
    distinct.push_back(text);
    for (const auto& [name, value] : entry.extents_of(workload)) {
      auto [low, added] = shapes.low.emplace(name, value);
      if (!added) low->second = std::min(low->second, value);
      auto [high, added_high] = shapes.high.emplace(name, value);
      if (!added_high) high->second = std::max(high->second, value);
    }
  }
  if (distinct.size() < 2) throw BadInput("dispatch: the shapes are one shape: a dispatch needs two or more");
  shapes.sampled = std::move(distinct);
  for (const auto& text : shapes.held_out) {
    kernels::Workload workload;
    try {
      workload = kernels::parse_workload(op, text);
    } catch (const std::invalid_argument& error) {
      throw BadInput("dispatch: --held-out " + text + ": " + error.what());
    }
    if (!tuner::is_same_kind(workload, shapes.base) || !tuner::is_between(entry.extents_of(workload), shapes.low, shapes.high))
      throw BadInput("dispatch: --held-out " + text + " is not a shape of the range");
  }
  return shapes;
}

// Tunes each shape (trials of its own, the template of the first), or, with no trials or for a
// shape `tuned` names (tuned earlier in this run), makes its task to read what is recorded.
std::vector<TaskPointer> tune_shapes(const DispatchRequest& request, const std::vector<std::string>& shapes,
                                     std::string& template_name, const InstallPaths& paths, tuner::Progress& progress,
                                     const std::function<void(const std::string&)>& log,
                                     const std::set<std::string>& tuned = {}) {
  std::vector<TaskPointer> tasks;
  const auto remote = find_remote(request.tune.measuring);
  for (const auto& shape : shapes) {
    TuneRequest one = request.tune;
    one.shape = shape;
    one.template_name = template_name;
    one.budget.clear();
    if (request.tune.tuning.trials > 0 && !tuned.count(shape)) {
      tasks.push_back(run(plan_tune(one), paths, progress, log).shapes.front().task);
    } else {
      tasks.push_back(make_task(one.op, shape, one.measuring.target, nullptr, remote ? &remote->device : nullptr,
                                template_name));
    }
    template_name = tasks.back()->kernel_template->name();
  }
  return tasks;
}

// The configs measured together on each task (interleaved rounds), recorded as tuner "dispatch";
// seconds[t][i]: configs[t][i]'s median on tasks[t], nullopt where it failed or, `may_cut`, was cut as slow.
using Seconds = std::vector<std::vector<std::optional<double>>>;
Seconds measure_together(const DispatchRequest& request, const InstallPaths& paths,
                         const std::vector<TaskPointer>& tasks,
                         const std::vector<std::vector<search_space::Config>>& configs,
                         const std::function<void(const std::string&)>& log, bool may_cut) {
  auto database = open_database(request.tune.database, db::Database::Mode::kReadWrite);
  auto locks = lock_for_measuring("dispatch", paths.lock_dir, request.tune.database, tasks.front()->device,
                                  request.tune.wait_lock, true, log);
  Measuring measuring(request.tune.measuring, paths, find_remote(request.tune.measuring), log);
  tuner::RecordingMeasurer measurer(*measuring.builder, measuring.runner, database);
  const std::string run_id = tuner::make_run_id();
  Seconds seconds;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    seconds.emplace_back();
    if (configs[t].empty()) continue;
    if (log) log("dispatch: measuring " + std::to_string(configs[t].size()) + " configs on " + tasks[t]->workload.key());
    auto records = measurer.run(tasks[t], configs[t], "dispatch", run_id, false, nullptr, request.rounds, 0, {},
                                measure::Rounds::kCompared, std::nullopt, may_cut);
    measurer.record(records);
    for (const auto& record : records)
      seconds.back().push_back(record.ok() ? std::optional<double>(record.median_seconds) : std::nullopt);
  }
  return seconds;
}

// A finalist: a config tuned for one shape, read in the space of every sampled shape.
struct Finalist {
  nlohmann::json config;
  std::string from;
  std::vector<std::optional<search_space::Config>> on_shape;
};

// The finalists of tasks[from..] (the --finalists best of each) added to `finalists`, which are
// first read on those tasks' shapes too: a refinement adds shapes to a matrix already measured.
void add_finalists(const DispatchRequest& request, const std::vector<TaskPointer>& tasks, std::size_t from,
                   std::vector<Finalist>& finalists) {
  for (auto& finalist : finalists)
    for (std::size_t t = from; t < tasks.size(); ++t)
      finalist.on_shape.push_back(tuner::config_for_shape(tasks[t]->space, finalist.config));
  auto database = open_database(request.tune.database, db::Database::Mode::kReadOnly);
  std::vector<std::string> passed_over;
  for (std::size_t t = from; t < tasks.size(); ++t) {
    for (const auto& record :
         tuner::checked_top_k(database, tuner::task_filter(tuner::task_key(*tasks[t])), request.finalists, passed_over)) {
      Finalist finalist{record.config, record.workload_key, {}};
      for (const auto& other : tasks) finalist.on_shape.push_back(tuner::config_for_shape(other->space, record.config));
      // Two finalists that are one config on every shape are measured once.
      const bool known = std::any_of(finalists.begin(), finalists.end(),
                                     [&](const Finalist& f) { return f.on_shape == finalist.on_shape; });
      if (!known) finalists.push_back(std::move(finalist));
    }
  }
}

// The configs x shapes matrix: every finalist measured on every shape where its config is valid;
// the cells of `known` (the matrix before a refinement added rows and columns) are not measured again.
tuner::ConfigShapeMatrix measure_matrix(const DispatchRequest& request, const InstallPaths& paths,
                                        const std::vector<TaskPointer>& tasks, const std::vector<Finalist>& finalists,
                                        const tuner::ConfigShapeMatrix& known,
                                        const std::function<void(const std::string&)>& log) {
  auto is_known = [&known](std::size_t f, std::size_t t) { return f < known.seconds.size() && t < known.shapes.size(); };
  std::vector<std::vector<search_space::Config>> configs(tasks.size());
  // where[f][t]: the index of finalist f's config among configs[t].
  std::vector<std::vector<std::optional<std::size_t>>> where(finalists.size(),
                                                             std::vector<std::optional<std::size_t>>(tasks.size()));
  for (std::size_t f = 0; f < finalists.size(); ++f)
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const auto& config = finalists[f].on_shape[t];
      if (!config || is_known(f, t)) continue;
      auto& on_task = configs[t];
      const auto found = std::find(on_task.begin(), on_task.end(), *config);
      where[f][t] = static_cast<std::size_t>(found - on_task.begin());
      if (found == on_task.end()) on_task.push_back(*config);
    }
  // A config cut as slow on a shape holds it no better than one that failed there.
  const Seconds seconds = measure_together(request, paths, tasks, configs, log, true);
  tuner::ConfigShapeMatrix matrix;
  for (const auto& task : tasks) matrix.shapes.push_back(kernels::operator_entry(task->workload.op).extents_of(task->workload));
  for (std::size_t f = 0; f < finalists.size(); ++f) {
    matrix.seconds.emplace_back();
    for (std::size_t t = 0; t < tasks.size(); ++t)
      matrix.seconds.back().push_back(is_known(f, t) ? known.seconds[f][t]
                                      : where[f][t]  ? seconds[t][*where[f][t]]
                                                     : std::nullopt);
  }
  return matrix;
}

// Whether a config may run over a whole box: it is valid at the box's corners.
tuner::RunsOverBox runs_over_box(const kernels::KernelTemplate& kernel, const kernels::Workload& base,
                                 const kernels::DeviceInfo& device, const std::vector<nlohmann::json>& configs) {
  return [&kernel, base, device, configs](std::size_t config, const tuner::DispatchLeaf& box) {
    for (const auto* corner : {&box.low, &box.high}) {
      try {
        const auto workload = tuner::workload_at(base, *corner);
        if (!tuner::config_for_shape(kernel.space(workload, device), configs.at(config))) return false;
      } catch (const std::invalid_argument&) {
        return false;
      }
    }
    return true;
  };
}

// The held-out checks of one round and their shapes' tasks (each tuned for its own best).
struct Validation {
  std::vector<HeldOutCheck> checks;
  std::vector<TaskPointer> tasks;
};

// Each held-out shape tuned for its own best (unless `tuned` names it: checked in an earlier round),
// then measured together with the rule's config and the nearest tuned shape's config. That one is
// chosen, once per shape, before the shape is tuned, as pick would have answered without the rule.
Validation validate(const DispatchRequest& request, const InstallPaths& paths, const std::vector<std::string>& held_out,
                    const std::set<std::string>& tuned,
                    std::map<std::string, std::optional<tuner::NearestConfig>>& nearest, const kernels::Workload& base,
                    const tuner::DispatchRule& rule, std::string template_name, const TaskPointer& first,
                    tuner::Progress& progress, const std::function<void(const std::string&)>& log) {
  Validation validation;
  if (held_out.empty()) return validation;
  const auto target = backends::parse_target(request.tune.measuring.target);
  {
    auto database = open_database(request.tune.database, db::Database::Mode::kReadOnly);
    for (const auto& text : held_out)
      if (!nearest.count(text))
        nearest[text] = tuner::nearest_config(database, kernels::parse_workload(base.op, text), target, first->device,
                                              tuner::NearestRanking::kCostModel);
  }
  const auto& tasks = validation.tasks = tune_shapes(request, held_out, template_name, paths, progress, log, tuned);
  auto database = open_database(request.tune.database, db::Database::Mode::kReadOnly);
  auto& checks = validation.checks;
  std::vector<std::vector<search_space::Config>> configs(tasks.size());
  std::vector<std::array<std::optional<std::size_t>, 3>> where(tasks.size());  // own best, rule, nearest
  auto add = [&](std::size_t t, std::size_t role, const std::optional<search_space::Config>& config) {
    if (!config) return;
    auto& on_task = configs[t];
    const auto found = std::find(on_task.begin(), on_task.end(), *config);
    where[t][role] = static_cast<std::size_t>(found - on_task.begin());
    if (found == on_task.end()) on_task.push_back(*config);
  };
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const auto& task = *tasks[t];
    const auto extents = kernels::operator_entry(task.workload.op).extents_of(task.workload);
    const auto leaf = rule.leaf_of(extents);
    checks.push_back({task.workload.key(), leaf ? rule.leaf_name(*leaf) : "", {}, {}, {}});
    if (auto own = tuner::best_usable(database, tuner::task_key(task), task.space)) add(t, 0, own->config);
    if (leaf) add(t, 1, tuner::config_for_shape(task.space, rule.configs[rule.leaves[*leaf].config]));
    const auto& near = nearest.at(held_out[t]);
    if (near && near->kernel == task.kernel_template) add(t, 2, near->config);
  }
  // Timed in full: the check reports how far the rule and the nearest shape's config fall behind.
  const Seconds seconds = measure_together(request, paths, tasks, configs, log, false);
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    auto at = [&](std::size_t role) { return where[t][role] ? seconds[t][*where[t][role]] : std::nullopt; };
    checks[t].own_best = at(0);
    checks[t].rule = at(1);
    checks[t].nearest = at(2);
  }
  return validation;
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json checks_json(const std::vector<HeldOutCheck>& checks) {
  nlohmann::json json = nlohmann::json::array();
  for (const auto& check : checks)
    json.push_back({{"workload", check.workload},
                    {"leaf", check.leaf},
                    {"own_best", optional_json(check.own_best)},
                    {"rule", optional_json(check.rule)},
                    {"nearest", optional_json(check.nearest)}});
  return json;
}

// Everything the stored rule keeps: the rule itself, and the measurements it was fitted to.
nlohmann::json stored_rule(const DispatchOutcome& outcome, const DispatchRequest& request) {
  nlohmann::json json = tuner::rule_json(outcome.rule);
  json["range"] = outcome.range;
  json["within"] = request.within;
  json["most_configs"] = request.most_configs;
  json["cover"] = "greedy";
  json["shapes"] = outcome.shape_keys;
  nlohmann::json finalists = nlohmann::json::array(), matrix = nlohmann::json::array();
  for (std::size_t f = 0; f < outcome.finalists.size(); ++f) {
    finalists.push_back({{"config", outcome.finalists[f]}, {"from", outcome.finalist_from[f]}});
    nlohmann::json row = nlohmann::json::array();
    for (const auto& seconds : outcome.matrix.seconds[f]) row.push_back(optional_json(seconds));
    matrix.push_back(row);
  }
  json["finalists"] = finalists;
  json["matrix"] = matrix;  // seconds: [finalist][shape]
  json["chosen"] = outcome.cover.chosen;
  nlohmann::json uncovered = nlohmann::json::array();
  for (auto s : outcome.cover.uncovered) uncovered.push_back(outcome.shape_keys[s]);
  json["uncovered"] = uncovered;
  json["held_out"] = checks_json(outcome.held_out);
  nlohmann::json refinements = nlohmann::json::array();
  for (const auto& refinement : outcome.refinements)
    refinements.push_back({{"held_out", checks_json(refinement.checks)}, {"promoted", refinement.promoted}});
  json["refinements"] = refinements;
  return json;
}

}  // namespace

DispatchOutcome make_dispatch(const DispatchRequest& request, const InstallPaths& paths, tuner::Progress& progress,
                              std::function<void(const std::string&)> log) {
  if (request.most_configs < 1) throw BadInput("dispatch: --configs must be at least 1");
  if (!(request.within >= 0) || request.within > 10) throw BadInput("dispatch: --within must be from 0 to 1000 (%)");
  if (request.finalists < 1) throw BadInput("dispatch: --finalists must be at least 1");
  if (request.samples < 2) throw BadInput("dispatch: --samples must be at least 2");
  if (request.rounds < 1 || request.rounds > kMaxMeasureRounds)
    throw BadInput("dispatch: --rounds must be from 1 to " + std::to_string(kMaxMeasureRounds));
  RangeShapes shapes = shapes_of(request);
  std::string template_name = request.tune.template_name;
  // The sampled shapes learn nothing from the held-out ones' records (a shape tuned before the
  // dispatch would hand the rule its own best, and the check on it would prove nothing).
  DispatchRequest sampling = request;
  for (const auto& text : shapes.held_out)
    sampling.tune.tuning.tuner.unseen_workloads.insert(kernels::parse_workload(shapes.base.op, text).key());
  auto tasks = tune_shapes(sampling, shapes.sampled, template_name, paths, progress, log);
  const TaskPointer first = tasks.front();

  DispatchOutcome outcome;
  for (const auto& shape : request.shapes) outcome.range += (outcome.range.empty() ? "" : " ") + shape;
  std::vector<Finalist> finalists;
  std::map<std::string, std::optional<tuner::NearestConfig>> nearest;  // a held-out shape's, before it was tuned
  std::set<std::string> tuned_held_out;
  std::vector<std::string> held_out = shapes.held_out;
  // Measure, cover, fit and check; then, while a held-out shape misses and rounds are left, it
  // becomes a sampled shape (its finalists join; only the matrix's new cells are measured), the
  // rule is fitted again and checked on the other held-out shapes and fresh ones drawn in its place.
  for (std::size_t round = 0;; ++round) {
    const std::size_t measured_shapes = outcome.shape_keys.size();
    for (std::size_t t = measured_shapes; t < tasks.size(); ++t) outcome.shape_keys.push_back(tasks[t]->workload.key());
    add_finalists(request, tasks, measured_shapes, finalists);
    if (finalists.empty())
      throw std::runtime_error("dispatch: no shape of " + outcome.range + " has a successful record to start from");
    outcome.finalists.clear();
    outcome.finalist_from.clear();
    for (const auto& finalist : finalists) {
      outcome.finalists.push_back(finalist.config);
      outcome.finalist_from.push_back(finalist.from);
    }
    outcome.matrix = measure_matrix(request, paths, tasks, finalists, outcome.matrix, log);
    outcome.cover = tuner::greedy_cover(outcome.matrix, request.most_configs, request.within);
    if (outcome.cover.chosen.empty())
      throw std::runtime_error("dispatch: no finalist ran on any shape of " + outcome.range);
    outcome.rule = {};
    for (auto c : outcome.cover.chosen) {
      outcome.rule.configs.push_back(finalists[c].config);
      outcome.rule.configs_from.push_back(finalists[c].from);
    }
    outcome.rule.leaves =
        tuner::fit_leaves(outcome.matrix, outcome.cover.chosen, shapes.low, shapes.high, 16,
                          runs_over_box(*first->kernel_template, shapes.base, first->device, outcome.rule.configs));
    Validation validation = validate(request, paths, held_out, tuned_held_out, nearest, shapes.base, outcome.rule,
                                     template_name, first, progress, log);
    outcome.held_out = validation.checks;
    for (const auto& text : held_out) tuned_held_out.insert(text);
    std::vector<std::size_t> missed;
    for (std::size_t h = 0; h < held_out.size(); ++h)
      if (validation.checks[h].misses(request.within)) missed.push_back(h);
    if (missed.empty() || round == request.refine) break;
    std::vector<std::string> kept, promoted;
    for (std::size_t h = 0; h < held_out.size(); ++h) {
      if (std::find(missed.begin(), missed.end(), h) == missed.end()) {
        kept.push_back(held_out[h]);
        continue;
      }
      promoted.push_back(validation.checks[h].workload);
      shapes.sampled.push_back(held_out[h]);
      tasks.push_back(validation.tasks[h]);
    }
    outcome.refinements.push_back({validation.checks, promoted});
    if (log) log("dispatch: the rule misses " + std::to_string(promoted.size()) + " held-out shapes: sampling them too");
    if (shapes.is_range && request.held_out.empty()) {
      std::vector<std::string> seen = shapes.sampled;
      seen.insert(seen.end(), tuned_held_out.begin(), tuned_held_out.end());
      for (auto& fresh : tuner::held_out_shapes(request.shapes.front(), promoted.size(), seen))
        kept.push_back(std::move(fresh));
    }
    held_out = std::move(kept);
  }

  db::DispatchRecord& stored = outcome.stored;
  stored.template_name = template_name;
  stored.target = backends::parse_target(request.tune.measuring.target).str();
  stored.device_id = first->device.fingerprint_id();
  stored.low_key = tuner::workload_at(shapes.base, shapes.low).key();
  stored.high_key = tuner::workload_at(shapes.base, shapes.high).key();
  stored.rule = stored_rule(outcome, request);
  stored.timestamp =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  stored.optune_version = OPTUNE_VERSION;
  stored.id = open_database(request.tune.database, db::Database::Mode::kReadWrite).insert_dispatch(stored);
  return outcome;
}

nlohmann::json dispatch_json(const DispatchOutcome& outcome) {
  nlohmann::json json = outcome.stored.rule;
  json["id"] = outcome.stored.id;
  json["template"] = outcome.stored.template_name;
  json["target"] = outcome.stored.target;
  json["device_id"] = outcome.stored.device_id;
  json["low"] = outcome.stored.low_key;
  json["high"] = outcome.stored.high_key;
  return json;
}

}  // namespace optune::app
