// RpcRunner: a Runner that measures on remote devices. For each batch it leases every free device
// of its key from the tracker and measures on all of them in parallel (one candidate at a time per
// device); a comparison (the finalists' rounds) is measured on one device, so that one GPU of a
// host, or one board, times every candidate it compares. A transport failure (server killed, connection lost) ends that device's part of the
// batch and puts its candidate back for another device, re-leasing when none is left; a candidate
// that keeps failing that way becomes a transport_error result, as does one whose target no
// leased server measures on the task's device (each server is asked, per target, which device it
// measures it on: its CPU, or an OpenCL device). Results already measured are
// never lost. A tracker that cannot be reached (restarting) is tried again, at growing intervals,
// for lease_wait_seconds, the batch kept meanwhile. Only when no device of the key can be had at
// all, and nothing of the batch was measured, does run() throw, so the tuning stops cleanly
// instead of spinning.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/runner.hpp"
#include "optune/measure/timing_policy.hpp"

namespace optune::measure::rpc {

struct RpcRunnerOptions {
  Endpoint tracker;
  std::string key;
  Token token;
  TimingPolicy timing;
  int max_attempts = 3;             // per candidate, counting transport failures
  double lease_wait_seconds = 60;   // queueing at the tracker for a device of the key; also how long
                                    // a tracker that cannot be reached is tried again
  double connect_timeout_seconds = 10;
  double prepare_allowance_seconds = 600;  // a server's first candidate of a workload makes its inputs
  bool remove_artifacts = true;
  std::function<void(const std::string&)> log;  // transport problems, for the user; may be empty
};

// No device of the key could be leased and nothing of the batch was measured.
class NoDeviceError : public TransportError {
 public:
  using TransportError::TransportError;
};

class TrackerClient;

class RpcRunner final : public Runner {
 public:
  explicit RpcRunner(RpcRunnerOptions options);
  ~RpcRunner() override;
 private:
  std::vector<MeasureResult> measure_round(const std::vector<MeasureInput>& inputs,
                                           const std::vector<BuildResult>& builds) override;
  RpcRunnerOptions options_;
  // The tracker's connection, kept from round to round so that a round's release reaches the
  // tracker before the next round's request (a new connection could overtake it).
  std::unique_ptr<TrackerClient> tracker_;
  std::optional<Endpoint> comparison_device_;  // the server a comparison's rounds ran on
};

}  // namespace optune::measure::rpc
