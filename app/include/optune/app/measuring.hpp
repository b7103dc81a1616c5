// The measuring parts of a run that measures (tune, job run, regress, the Python module's tune):
// a builder (parallel C++ compiles for CPU targets, cross compiles for `cpu:<triple>`; OpenCL
// candidates become artifact files) and a runner (an isolated worker on this machine, or remote
// servers leased from an RPC tracker), made once from the settings and shared by all tasks.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optune/app/install_paths.hpp"
#include "optune/app/remote.hpp"
#include "optune/measure/backend.hpp"
#include "optune/measure/builder.hpp"
#include "optune/measure/runner.hpp"
#include "optune/measure/timing_policy.hpp"

namespace optune::app {

struct MeasureSettings {
  std::string target = "cpu";  // chooses the builder
  // How candidates are timed; its min_repeat_ms is `min_repeat_ms` where given, for every
  // measurement, else the target backend's (measure::Backend::default_min_repeat_ms: 40 ms, 5 for
  // CUDA; comparison_min_repeat_ms for the finalists' comparison: 40 on CUDA): timing_for().
  measure::TimingPolicy timing;
  std::optional<double> min_repeat_ms;
  // The compiler, parallel compiles and compile timeout; the installation's folders are filled in
  // from InstallPaths when the builder is made.
  measure::BuildSettings build;
  std::string rpc;               // KEY@TRACKER_HOST:PORT; "" measures on this machine
  std::string token_file;
  double rpc_wait = 60;          // seconds to wait for a device of the key
};

// The timing policy the runner of `target` gets.
measure::TimingPolicy timing_for(const MeasureSettings& settings, const kernels::Target& target);

inline std::optional<Remote> find_remote(const MeasureSettings& settings) {
  return find_remote(settings.rpc, settings.token_file, settings.rpc_wait, settings.target);
}

struct Measuring {
  std::unique_ptr<measure::Builder> builder;
  std::unique_ptr<measure::Runner> runner_owner;
  measure::Runner& runner;
  // `log`: where the RPC runner's lines go, as "rpc: ..." (null: nowhere).
  Measuring(const MeasureSettings& settings, const InstallPaths& paths, const std::optional<Remote>& remote,
            std::function<void(const std::string&)> log = nullptr);
  // The same for settings.target parsed already (a run's plan). `spread`: several devices of the
  // target's model that this machine measures on at once (measure::DeviceSpreadRunner), the
  // target's own first; empty: the target's device alone. Never with a remote (plan_tune refuses
  // it: parse_spread_targets).
  Measuring(const MeasureSettings& settings, const kernels::Target& target, const InstallPaths& paths,
            const std::optional<Remote>& remote, std::function<void(const std::string&)> log = nullptr,
            const std::vector<kernels::Target>& spread = {});
};

// The toolchain a run with `settings` builds `device`'s candidates with (measure::Builder::toolchain),
// without starting a runner: what apply-best holds its rows' records to. BadInput for an unknown target.
measure::Toolchain todays_toolchain(const MeasureSettings& settings, const InstallPaths& paths,
                                    const kernels::DeviceInfo& device);

}  // namespace optune::app
