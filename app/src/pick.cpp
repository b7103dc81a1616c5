#include "optune/app/pick.hpp"

#include <map>

#include "optune/app/bad_input.hpp"
#include "optune/app/query.hpp"
#include "optune/app/tasks.hpp"
#include "optune/backends/registry.hpp"
#include "optune/tuner/results/nearest_config.hpp"
#include "optune/tuner/search/record_check.hpp"
#include "optune/tuner/results/stored_dispatch.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::app {
namespace {

// The fastest records read of the workload itself: the best one an older space cannot read is
// passed over for the next (as apply-best does).
constexpr std::size_t kOwnCandidates = 32;

// The one device of the target's records that `device` names; nullopt when none is recorded.
std::optional<kernels::DeviceInfo> recorded_device(const db::Database& database, const kernels::Target& target,
                                                   const std::string& device) {
  db::RecordFilter filter;
  filter.target = target.str();
  filter.device = device;
  std::map<std::string, std::string> names;  // by device id
  db::TuningRecord any;
  for (auto& record : database.top_k(filter, 1)) {
    names.emplace(record.device_id, record.device_fingerprint.value("name", ""));
    any = std::move(record);
  }
  if (names.size() > 1) {
    std::string listed;
    for (const auto& [id, name] : names) listed += (listed.empty() ? "" : ", ") + id + " (" + name + ")";
    throw BadInput("pick: records of several devices match target " + target.str() + "; choose one with --device: " +
                   listed);
  }
  if (names.empty()) return std::nullopt;
  try {
    return kernels::DeviceInfo::from_fingerprint(any.device_fingerprint);
  } catch (const std::exception& error) {
    throw BadInput("pick: the device of " + any.workload_key + " cannot be read: " + error.what());
  }
}

// The workload's best record on the device (the database's ranking) whose config its template's
// space reads.
bool pick_tuned(const db::Database& database, const kernels::Workload& workload, Pick& pick) {
  db::RecordFilter filter;
  filter.workload_key = pick.workload;
  filter.target = pick.target;
  filter.device = pick.device_id;
  std::vector<std::string> passed_over;
  // The first in the database's ranking (its declared winner, then by median) that reads.
  for (const auto& record : tuner::checked_top_k(database, filter, kOwnCandidates, passed_over)) {
    if (pick.record) break;
    try {
      const auto& kernel = backends::template_of_record(record.template_name, record.config);
      auto device = kernels::DeviceInfo::from_fingerprint(record.device_fingerprint);
      auto space = kernel.space(workload, device);
      auto config = tuner::readable_config(space, record);
      if (!config) continue;
      pick.template_name = kernel.name();
      pick.config = space.to_json(*config);
      pick.record = record;
    } catch (const std::exception&) {
      continue;  // a template this build does not have, or an unreadable device
    }
  }
  if (!pick.record) return false;
  pick.source = PickSource::kTuned;
  pick.tied_with = tied_runner_up(database, *pick.record);
  return true;
}

// The leaf holding the workload of a measured dispatch of its range, where its config is valid
// for the workload (the rule's leaves take configs valid over their boxes: apply-best's range
// rows run them there).
bool pick_dispatch(const db::Database& database, const kernels::Workload& workload, const kernels::DeviceInfo& device,
                   Pick& pick) {
  std::vector<std::string> passed_over;
  auto match = tuner::dispatch_for(database.dispatches(pick.target, pick.device_id), workload, passed_over);
  if (!match) return false;
  const auto leaf = tuner::leaf_config(*match, workload, device);
  if (!leaf) return false;
  pick.template_name = leaf->kernel->name();
  pick.config = leaf->space.to_json(leaf->config);
  const std::size_t config_index = match->rule.leaves[match->leaf].config;
  pick.source = PickSource::kDispatch;
  pick.dispatch = Pick::DispatchLeaf{match->record.id, tuner::range_text(match->record),
                                     match->rule.leaf_name(match->leaf), match->leaf,
                                     match->rule.configs_from[config_index]};
  return true;
}

bool pick_nearest(const db::Database& database, const kernels::Workload& workload, const kernels::Target& target,
                  const kernels::DeviceInfo& device, Pick& pick) {
  auto nearest = tuner::nearest_config(database, workload, target, device);
  if (!nearest) return false;
  pick.source = PickSource::kNearest;
  pick.template_name = nearest->kernel->name();
  pick.config = nearest->space.to_json(nearest->config);
  pick.record = std::move(nearest->source);
  pick.ranked_by_model = nearest->ranked_by_model;
  pick.candidates = nearest->candidates;
  return true;
}

void pick_default(const kernels::Workload& workload, const kernels::Target& target, const kernels::DeviceInfo& device,
                  Pick& pick) {
  const auto& kernel = backends::default_template(workload, target.backend, device);
  auto space = kernel.space(workload, device);
  pick.source = PickSource::kDefault;
  pick.template_name = kernel.name();
  pick.config = space.to_json(kernel.default_config(workload, device, space));
}

}  // namespace

std::string_view pick_source_name(PickSource source) {
  switch (source) {
    case PickSource::kTuned: return "tuned";
    case PickSource::kDispatch: return "dispatch";
    case PickSource::kNearest: return "nearest";
    case PickSource::kDefault: return "default";
  }
  return "default";
}

Pick pick_config(const PickRequest& request) {
  kernels::Workload workload;
  kernels::Target target;
  try {
    workload = kernels::parse_workload(kernels::parse_op(request.op), request.shape);
    target = backends::parse_target(request.target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("pick: ") + error.what());
  }
  auto database = open_database(request.database, db::Database::Mode::kReadOnly);
  auto recorded = recorded_device(database, target, request.device);
  // A device named but never recorded: its default config cannot be told without the device.
  if (!recorded && !request.device.empty())
    throw BadInput("pick: no records of target " + target.str() + " match device '" + request.device +
                   "' in " + request.database);
  kernels::DeviceInfo device;
  try {
    device = recorded ? *recorded : backends::find_device(target);
  } catch (const std::invalid_argument& error) {
    // pick measures nothing: a device not on this machine (a remote target's) is known from its
    // records alone, so the finder's advice to connect to it does not apply here.
    std::string why = error.what();
    if (auto advice = why.find(": give --rpc"); advice != std::string::npos) why.resize(advice);
    throw BadInput("pick: " + request.database + " holds no records of target " + target.str() +
                   " to read its device from, and " + why + " (tune it there first: optune tune --rpc)");
  }
  Pick pick;
  pick.workload = workload.key();
  pick.target = target.str();
  pick.device = device.name;
  pick.device_id = device.fingerprint_id();
  if (recorded && (pick_tuned(database, workload, pick) || pick_dispatch(database, workload, device, pick) ||
                   pick_nearest(database, workload, target, device, pick)))
    return pick;
  try {
    pick_default(workload, target, device, pick);
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("pick: ") + error.what());
  }
  return pick;
}

nlohmann::json pick_json(const Pick& pick) {
  return {{"workload", pick.workload},
          {"template", pick.template_name},
          {"target", pick.target},
          {"device", pick.device},
          {"device_id", pick.device_id},
          {"source", pick_source_name(pick.source)},
          {"config", pick.config},
          {"from_workload", pick.source == PickSource::kNearest    ? nlohmann::json(pick.record->workload_key)
                            : pick.source == PickSource::kDispatch ? nlohmann::json(pick.dispatch->from_workload)
                                                                   : nlohmann::json(nullptr)},
          {"dispatch", pick.dispatch ? nlohmann::json{{"rule_id", pick.dispatch->rule_id},
                                                      {"range", pick.dispatch->range},
                                                      {"leaf", pick.dispatch->leaf},
                                                      {"leaf_index", pick.dispatch->leaf_index}}
                                     : nlohmann::json(nullptr)},
          {"record", pick.record ? record_json(*pick.record) : nlohmann::json(nullptr)},
          {"ranked_by_model", pick.ranked_by_model},
          {"tied_with", pick.tied_with ? record_json(*pick.tied_with) : nlohmann::json(nullptr)},
          {"candidates", pick.candidates}};
}

}  // namespace optune::app
