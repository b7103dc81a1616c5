// The measuring parts of a command that measures (tune, job run, regress): a builder (parallel C++
// compiles for CPU targets, cross compiles for `cpu:<triple>`; OpenCL candidates become artifact
// files) and a runner (an isolated worker on this machine, or remote servers leased from an RPC
// tracker), made once from the command's settings and shared by all its tasks.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "optune/kernels/device_info.hpp"
#include "optune/measure/builder.hpp"
#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/runner.hpp"
#include "optune/measure/timing_policy.hpp"
#include "optune/tuner/device_lock.hpp"
#include "rpc_support.hpp"

namespace optune::cli {

struct MeasureSettings {
  std::string target = "cpu";  // chooses the builder
  measure::TimingPolicy timing;
  int jobs = 0;                  // parallel compiles; 0: all cores
  double compile_timeout = 120;  // seconds
  std::string compiler = "c++";
  std::string rpc;               // KEY@TRACKER_HOST:PORT; "" measures on this machine
  std::string token_file;
  double rpc_wait = 60;          // seconds to wait for a device of the key
};

// Remote measurement: where, with which token, and the remote device (whose fingerprint the
// records carry).
struct Remote {
  RpcAddress address;
  measure::rpc::Token token;
  kernels::DeviceInfo device;
};
// nullopt without settings.rpc; throws UsageError when the tracker cannot be used.
std::optional<Remote> find_remote(const MeasureSettings& settings);

struct Measuring {
  std::unique_ptr<measure::Builder> builder;
  std::unique_ptr<measure::Runner> runner_owner;
  measure::Runner& runner;
  explicit Measuring(const MeasureSettings& settings, const std::optional<Remote>& remote = std::nullopt);
};

// What a command that measures holds for its whole run (device_lock.hpp): the device's lock, and
// for a run that writes records a shared hold on its database, which keeps prune away.
struct RunLocks {
  tuner::FileLock device;
  std::optional<tuner::FileLock> database;
};
// `who` names the run in the lock file and in messages ("tune", "job nightly"). When another run
// measures on the device: with `wait_for_device`, a line on stderr and a wait; without, a
// std::runtime_error naming that run (exit code 1: the input is fine, the device is busy).
RunLocks lock_for_measuring(const std::string& who, const std::string& database_path,
                            const kernels::DeviceInfo& device, bool wait_for_device, bool writes_records);
// Registers `--wait-lock` for a command that measures.
void add_wait_lock_option(CLI::App& command, bool& wait);

}  // namespace optune::cli
