// Measuring given configs of one workload, without tuning (`optune measure`; Kernel Tuner's
// run_kernel counterpart): configs given as JSON, the template's default, or what `optune pick`
// answers, built together and timed interleaved over several rounds (a slow spell of a shared
// machine falls on all alike), each with the confidence interval of its median. Every
// measurement is a record (tuner "measure") in the database.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/app/install_paths.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/tuning.hpp"
#include "optune/db/tuning_record.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/measure/median_interval.hpp"

namespace optune::app {

struct MeasureRequest {
  std::string op = "gemm";   // a workload: op and shape (dtype as its `dtype=` item) ...
  std::string shape;
  std::string template_name;  // "": the workload's default template
  std::string kernel_file;    // ... or a user's kernel file at `shape` (its extents)
  std::vector<std::string> configs;  // JSON objects: knob values by name
  bool with_default = false;         // the template's default config too
  bool from_pick = false;            // the config `optune pick` gives for the workload (from the database)
  std::string database = kDefaultDatabase;
  bool wait_lock = false;
  int rounds = 5;                    // interleaved rounds
  MeasureSettings measuring;
};

inline constexpr int kMaxMeasureRounds = 100;

struct MeasuredConfig {
  std::string source;            // "given", "default", "pick: tuned|nearest|default" (joined by ", " when several)
  nlohmann::json config;         // knob values by name
  db::TuningRecord record;       // as stored
  measure::Interval interval;    // of the median over every round's costs (seconds)
};

struct MeasureOutcome {
  std::shared_ptr<const measure::MeasureTask> task;
  int rounds = 0;
  std::vector<MeasuredConfig> configs;  // in the order given: configs, then default, then pick; each config once
};

// Throws BadInput for a malformed or unknown config (naming the knob or the rule it breaks), no
// config to measure, or what make_task refuses, before anything is measured.
MeasureOutcome measure_configs(const MeasureRequest& request, const InstallPaths& paths,
                               std::function<void(const std::string&)> log = nullptr);

}  // namespace optune::app
