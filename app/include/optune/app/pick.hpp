// Which config runs for a workload on a device, and where it came from (`optune pick`,
// optune.pick()): the workload's own tuned best (`tuned`), else the config of the leaf holding it
// of a measured dispatch whose range holds it (`dispatch`, app/dispatch.hpp), else the config
// tuned for another shape of its template that the cost model ranks best for it (`nearest`,
// tuner/results/nearest_config.hpp), else the template's default config (`default`). The same
// choice `optune apply-best` compiles into an application's header.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "optune/db/tuning_record.hpp"

namespace optune::app {

struct PickRequest {
  std::string database;
  std::string op;
  std::string shape;
  std::string target = "cpu";
  std::string device;  // id or part of its name; "": the only device recorded for the target
};

enum class PickSource { kTuned, kDispatch, kNearest, kDefault };
std::string_view pick_source_name(PickSource source);  // "tuned", "dispatch", "nearest", "default"

struct Pick {
  std::string workload;       // the key
  std::string template_name;  // the template the config is a point of
  std::string target;
  std::string device;         // the device's name
  std::string device_id;
  PickSource source = PickSource::kDefault;
  nlohmann::json config;      // knob values by name, in the workload's own space
  // tuned: the workload's best record; nearest: the record of the tuned shape the config came
  // from (its workload_key names the shape); default: none.
  std::optional<db::TuningRecord> record;
  bool ranked_by_model = false;  // nearest: whether the cost model chose (else the closest shape)
  std::size_t candidates = 0;    // nearest: tuned shapes whose best config was valid here
  // dispatch: the rule's id, its range, the leaf's name and index, and the workload its config
  // was tuned for.
  struct DispatchLeaf {
    std::int64_t rule_id = 0;
    std::string range;
    std::string leaf;
    std::size_t leaf_index = 0;
    std::string from_workload;
  };
  std::optional<DispatchLeaf> dispatch;
  // tuned: the next config of the ranking where it is tied within noise with the one picked
  // (db::are_tied): either could be the fastest on this device.
  std::optional<db::TuningRecord> tied_with;
};

// Throws BadInput for a malformed shape, an unknown op or target, an unreadable database, or
// records of several devices when `device` does not choose one, or a `device` that no record of
// the target matches. With nothing recorded for the target (and no `device`), the default config
// is for this machine's device of the target.
Pick pick_config(const PickRequest& request);

// workload, template, target, device, device_id, source, config, from_workload (nearest and
// dispatch), dispatch (rule_id, range, leaf, leaf_index; null unless the source is dispatch) and
// record (as optune query gives it; null for dispatch and the default), ranked_by_model, tied_with (the
// record of the config tied within noise with the one picked; null when none).
nlohmann::json pick_json(const Pick& pick);

}  // namespace optune::app
