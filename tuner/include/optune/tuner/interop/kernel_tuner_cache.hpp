// Kernel Tuner's cache file and optune's records of a kernel file's workload, both ways (issue 20):
// `optune import --kernel-tuner` brings a user's Kernel Tuner history in, `optune export
// --kernel-tuner` writes optune's records as a cache file that Kernel Tuner (its simulation mode,
// dashboard and methodology tools) and optune's own landscape reader read. Reading a cache file is
// the landscape reader's (replay/landscape_file.hpp); this maps its configurations onto the kernel
// file's space and back.
//
// How the two meet:
//  - parameters: the cache's tune_params are the file's knobs, by name (the order may differ);
//  - times: Kernel Tuner writes milliseconds, records hold seconds. An entry's `times` (its single
//    runs) become the record's costs and their median its median_seconds; Kernel Tuner's own
//    `time` (the mean of its runs) is used only when the entry has no `times`. Export writes the
//    median as `time` and the costs as `times`;
//  - failures: CompilationFailedConfig is a build_error, RuntimeFailedConfig (and any other
//    failure string) a runtime_error, InvalidConfig (outside the restrictions) is no record. T4
//    invalidities: "compile" a build_error, "correctness" a wrong_answer, others runtime_error.
//    Export writes build_error as CompilationFailedConfig and every other failure as
//    RuntimeFailedConfig, except transport_error (the link failed, not the config): not written;
//  - `compile_time` (ms) is the record's build_seconds, `timestamp` its timestamp (0 when absent).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optune/db/tuning_record.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/tuner/replay/landscape_file.hpp"

namespace optune::tuner {

// The `tuner` field of an imported record.
inline constexpr char kKernelTunerTuner[] = "kernel_tuner";

// The error kind of a Kernel Tuner failure string or a T4 invalidity, as said above.
std::string error_kind_of_failure(const std::string& failure);
// The failure string Kernel Tuner writes for a failed record's error kind.
std::string kernel_tuner_failure(const std::string& error_kind);

// Kernel Tuner's timestamps ("2023-12-22 09:54:05.502007+00:00", UTC offsets allowed) as unix
// seconds, and back in UTC; nullopt for text that is not one.
std::optional<double> parse_kernel_tuner_timestamp(const std::string& text);
std::string kernel_tuner_timestamp(double unix_seconds);

// The cache's configurations as records of the task's kernel workload, target and device (the
// task's template must be a kernel file's), each checked by RecordCheck::full. Throws
// std::invalid_argument with one line naming the problem: a cache parameter that is not a knob of
// the file or a knob the cache lacks, an entry whose value is not one of its knob's values or that
// breaks the file's constraints.
std::vector<db::TuningRecord> records_of_cache(const LandscapeFile& cache, const measure::MeasureTask& task,
                                               const std::string& run_id);

// A Kernel Tuner cache file of the task's kernel workload on its device, laid out as Kernel Tuner
// writes one (so that it appends to it after reopening): one entry per record, in the records'
// order. `records` are of the task's workload and device, one per config, their configs points
// of the task's space; transport errors are left out. Throws std::invalid_argument when none is left.
std::string kernel_tuner_cache_text(const measure::MeasureTask& task, const std::vector<db::TuningRecord>& records);

}  // namespace optune::tuner
