// TuningRecord: one measurement of one config, as stored in the database and exported as a JSON
// line. Plain data; the database fills `id` on insert. Failed candidates are records too, with
// error_kind naming the failure (DESIGN.md's measure result).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace optune::db {

// When a record's median is not to be trusted as it stands (TuningRecord::is_noisy): it is known to
// no better than +-10% (its spread), or other processes took over a tenth of the machine's CPU
// time (its load) or of the GPU's time (its device load) while it was measured. On a quiet
// machine a record's spread is mostly under 3% and its load under 2%; a build beside it, or a busy
// loop per core, takes 45-100% of the cores; a second process running kernels on the GPU takes
// about half of it.
inline constexpr double kNoisySpread = 0.10;
inline constexpr double kBusyLoad = 0.10;

// Whether other processes took over kBusyLoad of the device that ran the candidate: of the GPU
// where it has a figure of its own (device_load: CUDA), else of the host's CPU (`load`: the CPU is
// the device, or a device with no figure). A GPU's kernels are slowed by the host's load only
// through their launches, which the record's spread shows; judged by it, a tune's own compiles
// running beside its GPU measurements (compile-ahead) would make their records noisy.
bool is_busy(std::optional<double> load, std::optional<double> device_load);
// Why such a share makes a measurement untrustworthy: "other processes took 45% of the CPU" or
// "other processes took 60% of the GPU"; "" when not busy.
std::string busy_text(std::optional<double> load, std::optional<double> device_load);
// That share, at most kMaxBusyShare (a measurement left a tenth of the machine says little more
// than that it was slowed).
inline constexpr double kMaxBusyShare = 0.9;
double busy_share(std::optional<double> load, std::optional<double> device_load);
// What a throughput measured while others took `busy_share` of the machine would be on a quiet one,
// to first order: the others' share taken off its time (gflops / (1 - share)). A config that uses
// fewer cores than the machine has is slowed less than that, so the estimate is an upper bound on
// the CPU; on a GPU, whose time other processes' kernels take in slices, it is close.
double quiet_gflops_estimate(double gflops, std::optional<double> load, std::optional<double> device_load);

struct TuningRecord {
  std::int64_t id = 0;                // assigned by the database
  std::string workload_key;           // kernels::Workload::key()
  std::string template_name;          // kernels::KernelTemplate::name()
  std::string target;                 // kernels::Target::str()
  std::string device_id;              // kernels::DeviceInfo::fingerprint_id()
  nlohmann::json device_fingerprint;  // kernels::DeviceInfo::fingerprint()
  nlohmann::json config;              // ConfigSpace::to_json(), knob name -> value
  std::vector<double> costs;          // seconds, one per repeat
  // Median of costs; 0 when the candidate failed. A `slow` record (its timing stopped by the
  // bail-out, measure::ErrorKind::kSlow) has the median of the runs it had: a lower bound on its
  // time, and gflops the matching upper bound.
  double median_seconds = 0;
  double gflops = 0;                  // 0 when the candidate failed
  // ok, build_error, runtime_error, timeout, wrong_answer, crash, transport_error, reference_error, slow
  std::string error_kind = "ok";
  std::string error_message;
  double build_seconds = 0;
  // Seconds the worker spent checking the output (the checked run included) and timing the runs;
  // nullopt where unknown (a failure before the check, or a record of schema 4 or older).
  std::optional<double> check_seconds;
  std::optional<double> timing_seconds;
  // How far the output was from the reference (measure::MeasureResult::check_error): for a
  // built-in operator the relative L2 error against the float64 reference (f32 passes at <= 1e-4),
  // for a kernel file the worst element's error in units of its tolerance (<= 1 passes). nullopt
  // where no check ran (a build or runtime error, a crash, a timeout), where its error was not
  // finite (NaN in the output), or in a record of schema 7 or older.
  std::optional<double> check_error;
  double timestamp = 0;               // unix seconds
  std::string tuner;                  // "random", "grid", "xgb", "default", "remeasure", "final", ...
  std::string run_id;                 // groups the records of one tuning run
  std::string optune_version;
  bool is_default = false;            // the template's default config
  // The relative half-width of the 95% confidence interval of the median of `costs`
  // (measure/median_interval.hpp): 0.04 means the median is known to about +-4%. nullopt: unknown
  // (a failure, one cost, or a record of schema 1).
  std::optional<double> spread;
  // The share of the machine's CPU time (all cores, 0..1) that other processes took while it was
  // measured (measure/machine_load.hpp); nullopt: unknown (measured elsewhere, or schema 1).
  std::optional<double> load;
  // The share of the device's time (0..1) that other processes' work took while it was measured:
  // a GPU shared with another process (measure::WorkerBackend::device_load_since); nullopt: a CPU
  // target (its share is `load`), a device that cannot tell, or a record of schema 3 or older.
  std::optional<double> device_load;
  // This record's config won its run's final comparison (tuner/scheduling/final_comparison.hpp):
  // it stays the task's best until a config is measured faster beyond noise (is_displaced_by).
  bool winner = false;
  // What built it (measure::Toolchain): {"compiler": "c++ (Debian 12.2.0-14) 12.2.0", "flags":
  // "-std=c++20 -O3 ..."}, an object of strings; null: unknown (a record of schema 5 or older, or
  // one imported without it). Its optune is optune_version.
  nlohmann::json toolchain;

  bool ok() const { return error_kind == "ok"; }
  // Passed its check but was cut short as over the bail-out bound: at least median_seconds slow.
  bool is_slow() const { return error_kind == "slow"; }
  // The link to a remote device failed, not the config (transport_error): the record says nothing
  // of the config, which counts as unmeasured and is measured again by a later run.
  bool is_transport_failure() const { return error_kind == "transport_error"; }
  // A config measured again at the end of a run (the closing waves, "remeasure", or the final
  // comparison, "final"), not a trial of the budget.
  bool is_remeasurement() const { return tuner == "remeasure" || tuner == "final"; }
  // Measured on a busy machine or with a wide spread: query, pick, apply-best and regress say so,
  // and such a record cannot displace a winner (database.hpp's ranking).
  bool is_noisy() const {
    return (spread && *spread > kNoisySpread) || is_busy(load, device_load);
  }
  // Canonical config text (sorted keys, no spaces): the identity of a config within a task.
  std::string config_text() const { return config.dump(); }
};

// `challenger` is faster than `incumbent` beyond noise: its median stays below the incumbent's
// with both at the far ends of their spreads (an unknown spread counts as none).
bool is_faster_beyond_noise(const TuningRecord& challenger, const TuningRecord& incumbent);
// Neither of two records is faster than the other beyond noise.
bool are_tied(const TuningRecord& a, const TuningRecord& b);
// Whether `fastest` (a config's latest successful record, the fastest of its task) takes the
// place of the winner that a final comparison declared (`mark`, the record it marked, and
// `latest`, that config's latest success): only a record measured after the mark, outside that
// comparison, on a quiet machine, and faster than the winner beyond noise. So tables stop flipping
// between configs that are equal within noise.
bool displaces_winner(const TuningRecord& fastest, const TuningRecord& mark, const TuningRecord& latest);

// Why a noisy record is not to be trusted as it stands ("measured while other processes took 45% of
// the CPU", or of the GPU, "its median is known to +-14% only"); "" for a record that is not noisy.
std::string noise_text(const TuningRecord& record);

// Every field but id; spread, load, device_load, check_seconds, timing_seconds, check_error and
// toolchain only where known, and winner only where set, so that a record of schema 1 keeps the
// JSON line (and the content hash) it had.
nlohmann::json to_json(const TuningRecord& record);
// Throws std::invalid_argument naming the missing or mistyped field.
TuningRecord record_from_json(const nlohmann::json& json);

}  // namespace optune::db
