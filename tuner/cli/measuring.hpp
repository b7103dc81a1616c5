// The measuring parts of a command that measures (tune, job run, regress): a builder (parallel C++
// compiles for CPU targets, cross compiles for `cpu:<triple>`; OpenCL candidates become artifact
// files) and a runner (an isolated worker on this machine, or remote servers leased from an RPC
// tracker), made once from the command's settings and shared by all its tasks.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "optune/kernels/device_info.hpp"
#include "optune/measure/builder.hpp"
#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/runner.hpp"
#include "optune/measure/timing_policy.hpp"
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

}  // namespace optune::cli
