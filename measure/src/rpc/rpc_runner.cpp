#include "optune/measure/rpc/rpc_runner.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "optune/measure/local_runner.hpp"
#include "optune/measure/rpc/rpc_session.hpp"
#include "optune/measure/rpc/tracker.hpp"

namespace optune::measure::rpc {
namespace {

MeasureResult failure(ErrorKind kind, std::string message) {
  MeasureResult result;
  result.error = kind;
  result.message = std::move(message);
  result.timestamp = unix_now();
  return result;
}

// The candidates of one batch still to measure, shared by the threads of the leased devices.
struct BatchWork {
  std::mutex mutex;
  std::deque<std::size_t> pending;
  std::vector<int> attempts;
  std::vector<std::optional<MeasureResult>> results;
  std::exception_ptr fatal;  // an authentication failure: no retry helps

  std::optional<std::size_t> take() {
    std::lock_guard lock(mutex);
    if (pending.empty() || fatal) return std::nullopt;
    std::size_t index = pending.front();
    pending.pop_front();
    return index;
  }
  void finish(std::size_t index, MeasureResult result) {
    std::lock_guard lock(mutex);
    results[index] = std::move(result);
  }
  // A transport failure on `index`: back to the front of the queue, or a transport_error result.
  void retry_or_fail(std::size_t index, const std::string& message, int max_attempts) {
    std::lock_guard lock(mutex);
    if (++attempts[index] >= max_attempts)
      results[index] = failure(ErrorKind::kTransportError, message);
    else
      pending.push_front(index);
  }
};

// Waits between tries to reach a tracker that is gone, at first briefly (a restart takes
// seconds), then longer, for `patience_seconds` in all from the first failure.
class TrackerReconnection {
 public:
  explicit TrackerReconnection(double patience_seconds) : patience_(patience_seconds) {}
  void reset() { lost_ = false, delay_ = kFirstDelay; }
  // Sleeps before the next try; false when the patience would be spent by then.
  bool wait() {
    const auto now = std::chrono::steady_clock::now();
    if (!lost_) lost_ = true, lost_since_ = now;
    if (std::chrono::duration<double>(now - lost_since_).count() + delay_ > patience_) return false;
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_));
    delay_ = std::min(delay_ * 2, kLongestDelay);
    return true;
  }

 private:
  static constexpr double kFirstDelay = 0.25;  // seconds
  static constexpr double kLongestDelay = 4;   // seconds
  double patience_;
  double delay_ = kFirstDelay;
  // A flag and a time point rather than an optional, which GCC 12 takes for maybe uninitialised.
  bool lost_ = false;
  std::chrono::steady_clock::time_point lost_since_;
};

}  // namespace

RpcRunner::RpcRunner(RpcRunnerOptions options)
    : Runner(options.remove_artifacts), options_(std::move(options)) {}

RpcRunner::~RpcRunner() = default;

std::vector<MeasureResult> RpcRunner::measure_round(const std::vector<MeasureInput>& inputs,
                                                    const std::vector<BuildResult>& builds) {
  auto log = [&](const std::string& line) {
    if (options_.log) options_.log(line);
  };
  BatchWork work;
  work.attempts.assign(inputs.size(), 0);
  work.results.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (builds[i].ok()) work.pending.push_back(i);
    else work.results[i] = failure(builds[i].error, builds[i].message);
  }
  const double reply_timeout =
      options_.prepare_allowance_seconds + options_.timing.timeout_seconds + options_.connect_timeout_seconds;
  const TimingPolicy timing = is_comparing() ? comparison_policy(options_.timing) : options_.timing;

  // One device's share of the batch: candidates one at a time until none is left or the device
  // fails; then its thread ends. Records carry the task's device, so a server measures a target
  // only once it has said that it measures it on that very device.
  auto measure_on = [&](const LeasedServer& server) {
    std::optional<RpcSession> session;
    std::set<std::string> verified;  // target + device id
    while (auto index = work.take()) {
      const MeasureInput& input = inputs[*index];
      try {
        if (!session) session = RpcSession::open(server, options_.token, options_.connect_timeout_seconds);
        const std::string target = input.task->target.str(), wanted = input.task->device.fingerprint_id();
        if (!verified.contains(target + " " + wanted)) {
          kernels::DeviceInfo device = session->describe(target, reply_timeout);
          if (device.fingerprint_id() != wanted)
            throw NoSuchDeviceError("measures " + target + " on " + device.name + " [" + device.fingerprint_id() +
                                    "], not on the task's " + input.task->device.name + " [" + wanted + "]");
          verified.insert(target + " " + wanted);
        }
        auto reply = session->measure(builds[*index].artifact, worker_request(input, timing), reply_timeout);
        work.finish(*index, result_from_worker_reply(input, reply, timing));
      } catch (const AuthenticationError&) {
        std::lock_guard lock(work.mutex);
        work.pending.push_front(*index);
        if (!work.fatal) work.fatal = std::current_exception();
        return;
      } catch (const TransportError& error) {
        std::string message = "device " + server.endpoint.str() + ": " + error.what();
        log(message);
        work.retry_or_fail(*index, message, options_.max_attempts);
        return;  // this device is gone for this batch
      } catch (const NoSuchDeviceError& error) {  // a server of the key without the task's device
        std::string message = "device " + server.endpoint.str() + ": " + error.what();
        log(message);
        work.retry_or_fail(*index, message, options_.max_attempts);
        return;
      } catch (const std::exception& error) {  // e.g. the artifact cannot be read here
        work.finish(*index, failure(ErrorKind::kRuntimeError, error.what()));
      }
    }
  };

  std::string last_problem;
  int rounds_without_device = 0;
  TrackerReconnection reconnection(options_.lease_wait_seconds);
  while (!work.pending.empty() && !work.fatal) {
    std::vector<LeasedServer> leases;
    try {
      if (!tracker_) tracker_ = std::make_unique<TrackerClient>(options_.tracker, options_.token, options_.connect_timeout_seconds);
      // A comparison's candidates are timed on one device: their ratios must not mix two devices'
      // clocks (only a device that fails, or another client's lease of it, hands the rest to
      // another). Its later rounds ask for the device of its earlier ones.
      const std::size_t wanted = is_comparing() ? 1 : work.pending.size();
      leases = tracker_->request_lease(options_.key, wanted, options_.lease_wait_seconds,
                                      is_comparing() ? comparison_device_ : std::nullopt);
      if (is_comparing() && !leases.empty()) comparison_device_ = leases.front().endpoint;
      reconnection.reset();
    } catch (const AuthenticationError&) {
      throw;
    } catch (const TransportError& error) {
      // The tracker is gone or restarting; the leased servers and the batch are not: try it again,
      // the batch kept, until the wait for a device (--rpc-wait) is spent.
      tracker_.reset();
      last_problem = "tracker " + options_.tracker.str() + ": " + error.what();
      log(last_problem);
      if (reconnection.wait()) continue;
      last_problem += "; tried again for " + seconds_text(options_.lease_wait_seconds);
      break;
    }
    if (leases.empty()) {
      if (last_problem.empty())
        last_problem = "no device of key " + options_.key + " within " + seconds_text(options_.lease_wait_seconds);
      if (++rounds_without_device < options_.max_attempts) continue;
      break;
    }
    rounds_without_device = 0;
    last_problem.clear();
    std::vector<std::thread> threads;
    for (const auto& server : leases) threads.emplace_back(measure_on, server);
    for (auto& thread : threads) thread.join();
    try {
      tracker_->release(leases);
    } catch (const std::exception&) {
      tracker_.reset();  // closing the connection gives the leases back too
    }
  }
  if (work.fatal) std::rethrow_exception(work.fatal);

  bool any_measured = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) any_measured |= work.results[i] && builds[i].ok();
  if (!work.pending.empty() && !any_measured)
    throw NoDeviceError("no device to measure on: " + last_problem);

  std::vector<MeasureResult> results;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    MeasureResult result = work.results[i] ? *work.results[i] : failure(ErrorKind::kTransportError, last_problem);
    result.build_seconds += builds[i].build_seconds;  // OpenCL adds the remote compile
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace optune::measure::rpc
