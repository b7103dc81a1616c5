// RecordCheck: whether a record holds the values the tuner's own records hold. The database
// stores whatever is well typed; records that come from elsewhere (`import`, `merge`) are checked
// here first, so that a forged or corrupted record cannot lead a ranking (a 1,000,000 GFLOP/s
// "best"), break a build (a workload key apply-best cannot parse) or exclude configs. Readers of
// a database (query, apply-best) check what they read too and pass over what fails, with a note.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/db/tuning_record.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

// No device runs a float32 kernel faster than this (the fastest GPUs of 2026 run about 70,000
// GFLOP/s in FP32): a faster record is forged or broken. Narrower types run faster on tensor
// cores (an H200 does about 2,000,000 in fp8, a B200 4,500,000): the bound grows with the square
// of the width saved, 4,000,000 for 16-bit types and 16,000,000 for 8-bit ones.
inline constexpr double kMaxPlausibleGflops = 1e6;
double max_plausible_gflops(kernels::DataType dtype);
// gflops must equal the workload's flops / median_seconds within this share.
inline constexpr double kGflopsTolerance = 0.01;
// A timestamp later than now by more than this (clocks of two machines disagree) is forged: it
// would be every config's "latest" record for good.
inline constexpr double kMaxClockSkewSeconds = 86'400;

class RecordCheck {
 public:
  // Everything the tuner's own record satisfies: the workload key parses into a valid workload
  // and is written as this optune writes it, the template is known and fits the workload's op
  // and the target's backend, the device id is its fingerprint's, the config is a valid point of
  // the template's space for that workload and device, the error kind is known, and the figures
  // are those of figures(). Throws std::invalid_argument naming the first problem.
  void full(const db::TuningRecord& record);
  // The figures alone, for records already in a database (an older space's config is fine there):
  // config and device fingerprint are JSON objects; the workload key parses; a success has positive finite costs, their median as median_seconds
  // and gflops = flops / median_seconds (within kGflopsTolerance, below max_plausible_gflops of its dtype); a
  // failure no negative or non-finite figure; the timestamp is not in the future; a spread is
  // that of the costs (measure::median_spread) and a load a share from 0 to 1.
  void figures(const db::TuningRecord& record);
  // Templates beyond the registry's that records may name (a user's kernel file, whose template
  // is made from the file): full() checks their records against their space. Without its file, a
  // kernel file's record is checked for all but its space (template, target, device id, figures).
  void add_template(const kernels::KernelTemplate& kernel_template);

 private:
  kernels::Workload workload(const std::string& key);
  // nullptr for a kernel file's record whose template was not added.
  const kernels::KernelTemplate* template_of(const db::TuningRecord& record, const kernels::Workload& workload);
  std::vector<const kernels::KernelTemplate*> extra_templates_;
  std::map<std::string, kernels::Workload> workloads_;                    // by key
  std::map<std::string, search_space::ConfigSpace> spaces_;                // by template, key, device id
};

// Database::top_k() without the records that fail RecordCheck::figures(): the best `k` good records
// of each workload, target and device, each bad one passed over (and described in `passed_over`,
// "<workload key>: <problem>") rather than leading the ranking or hiding a good record below it.
std::vector<db::TuningRecord> checked_top_k(const db::Database& database, const db::RecordFilter& filter,
                                            std::size_t k, std::vector<std::string>& passed_over);

}  // namespace optune::tuner
