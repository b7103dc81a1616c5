// LandscapeFile: an exhaustively measured tuning space as the field publishes it, read so that a
// search can be replayed against it (`optune replay --landscape FILE`). Two formats:
//  - Kernel Tuner's cache file (.json, or .json.gz): `tune_params_keys`, `tune_params` and a
//    `cache` of one entry per measured configuration, `time` a number (ms) or a failure string
//    (since Kernel Tuner 1.5 the failure string is in `__error__`, and `objective` a list);
//  - a T4 results file (the Auto-Tuning Association's TuningSchema): `results`, each with a
//    `configuration`, an `invalidity` ("correct" or why not) and `measurements` by name.
// Such a landscape has no optune template. Its space is the general shape of a declared kernel:
// one values knob per tunable parameter, in the file's parameter order, and one constraint,
// membership in the file (configurations the kernel's restrictions removed are not there). A
// configuration that failed to compile or run is in the space and replays as a failed record.
// The same reader serves `optune import --kernel-tuner` (interop/kernel_tuner_cache.hpp), which
// also takes what a file says of each configuration beyond its time (LandscapeEntry).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "optune/measure/measure_input.hpp"
#include "optune/tuner/replay/landscape_replay.hpp"

namespace optune::tuner {

// What a file says of one configuration beyond its time.
struct LandscapeEntry {
  // Why it has no time: Kernel Tuner's failure string ("CompilationFailedConfig",
  // "RuntimeFailedConfig"), a T4 invalidity ("compile", "runtime", "correctness"); "" when timed.
  std::string failure;
  std::vector<double> samples;  // a timed one's single runs (Kernel Tuner's `times`), in the time's unit; may be empty
  double compile_ms = 0;        // Kernel Tuner's `compile_time` (0 when absent)
  std::string timestamp;        // Kernel Tuner's `timestamp` text ("2023-12-22 09:54:05.502007+00:00"; "" when absent)
};

struct LandscapeFile {
  std::string name;    // the file's name without .json / .json.gz
  std::string kernel;  // kernel_name ("" when the file has none)
  std::string device;  // device_name ("" when the file has none)
  std::vector<std::int64_t> problem_size;  // Kernel Tuner's problem_size (empty when the file has none)
  std::shared_ptr<measure::MeasureTask> task;  // no template; the space described above
  std::vector<search_space::Config> configs;   // every configuration in the space
  std::vector<double> times;                   // milliseconds; NaN: failed
  std::vector<LandscapeEntry> entries;         // per configuration
  double optimum = 0;                          // the lowest time (infinity when none has one)
  std::size_t invalid = 0;  // configurations the file marks invalid (InvalidConfig, T4 "constraints"): not in the space
};

// Throws std::invalid_argument with one line naming the file and what is wrong: unreadable, a
// broken or truncated gzip stream, larger than 1 GiB, not JSON or nested deeper than 64, neither
// format, a field of the wrong type, an objective other than time, no tunable parameters (or
// Kernel Tuner's tune_params_keys and tune_params naming different ones), a parameter without
// values, an entry whose values are not the parameters', two Kernel Tuner entries of one
// configuration, a time outside 1e-100 to 1e100 ms, no successful configuration.
LandscapeFile read_landscape_file(const std::filesystem::path& path);
// The same, also for a file whose every configuration failed (an import takes it; a replay cannot).
LandscapeFile read_measured_file(const std::filesystem::path& path);

// The same landscape as a replay pool: throughput 1 / time (failed: 0), so that the tuners,
// which maximise, minimise time.
Landscape replay_landscape(const LandscapeFile& file);

// The device that tells a landscape from another's: its device_name, else (no device_name, or
// Kernel Tuner's "" where its runner names no device) the file's name.
std::string landscape_device(const LandscapeFile& file);

// The file's configurations as records of its device (device_id = landscape_device), for the
// model's transfer set when another device's landscape of the same kernel is replayed.
std::vector<db::TuningRecord> landscape_records(const LandscapeFile& file);

}  // namespace optune::tuner
