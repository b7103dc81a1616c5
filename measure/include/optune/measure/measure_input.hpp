// What the builder and runner are given: a task (one template on one workload for one target and
// device, with its space) and the configs of a batch.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/target.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::measure {

struct MeasureTask {
  kernels::Workload workload;
  const kernels::KernelTemplate* kernel_template = nullptr;
  // A template made for this task alone (a user's kernel file); kernel_template points at it.
  std::shared_ptr<const kernels::KernelTemplate> owned_template;
  kernels::Target target;
  kernels::DeviceInfo device;
  search_space::ConfigSpace space;
};

struct MeasureInput {
  std::shared_ptr<const MeasureTask> task;
  search_space::Config config;
  // The task's best median so far where this candidate may be timed short (timing_policy.hpp):
  // not for the default or a re-measurement.
  std::optional<double> best_seconds;
  // false: against best_seconds the timing may end early (adaptive timing: an ok record of fewer
  // repeats) but never cut the candidate as `slow` (a run's first batch, whose best so far is the
  // default alone).
  bool may_cut = true;
};

}  // namespace optune::measure
