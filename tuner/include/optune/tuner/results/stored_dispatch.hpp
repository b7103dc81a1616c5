// The stored dispatch rule that holds a workload (`optune pick`, `optune apply-best`): among the
// rules in force of a target and device (db::Database::dispatches, newest first), the first whose
// range is of the workload's kind (op, dtype, layouts) and holds its extents, with the leaf of
// the rule (tuner/results/shape_dispatch.hpp) that holds them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optune/db/dispatch_record.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/tuner/results/shape_dispatch.hpp"

namespace optune::tuner {

struct DispatchMatch {
  db::DispatchRecord record;
  DispatchRule rule;
  std::size_t leaf = 0;
};

// Whether every extent is between low's and high's of that name (both included; an extent either
// lacks is outside).
bool is_between(const kernels::ExtentValues& extents, const kernels::ExtentValues& low,
                const kernels::ExtentValues& high);

// Whether two workloads are shapes of one kind of problem (op, dtype, layouts), as one rule's are.
bool is_same_kind(const kernels::Workload& a, const kernels::Workload& b);

// The workload of `kind`'s op, dtype and layouts at other extents (a corner of a rule's box).
// Throws std::invalid_argument for extents the operator refuses.
kernels::Workload workload_at(const kernels::Workload& kind, const kernels::ExtentValues& extents);

// Rules that cannot be read (a malformed range key or rule JSON) are passed over, each described
// in `passed_over` ("dispatch rule <id>: <problem>").
std::optional<DispatchMatch> dispatch_for(const std::vector<db::DispatchRecord>& in_force,
                                          const kernels::Workload& workload, std::vector<std::string>& passed_over);

// A matched leaf's config as a workload of its box runs it: its template, and the config read in
// the workload's space (config_for_shape).
struct LeafConfig {
  const kernels::KernelTemplate* kernel = nullptr;
  search_space::ConfigSpace space;
  search_space::Config config;
};

// Nullopt where the leaf's config is not valid for `workload`, or names a template this build
// does not have (a rule another build stored).
std::optional<LeafConfig> leaf_config(const DispatchMatch& match, const kernels::Workload& workload,
                                      const kernels::DeviceInfo& device);

// A rule that comes from elsewhere (`optune import`) checked before it is stored: its rule reads,
// its range's keys are workloads of one kind with low below high, and each leaf lies in the range.
// Throws std::invalid_argument naming the problem.
void check_dispatch_record(const db::DispatchRecord& dispatch);

// The range of a stored rule as text: "gemm.f32.M1.N768.K768 .. gemm.f32.M2048.N768.K768".
std::string range_text(const db::DispatchRecord& record);

}  // namespace optune::tuner
