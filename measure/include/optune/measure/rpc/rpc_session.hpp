// RpcSession: a client's authenticated connection to one server (directly or through a proxy):
// asks which device the server measures a target on, ships an artifact file with its worker
// request and returns the worker's reply.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/kernels/device_info.hpp"
#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/tracker.hpp"
#include "optune/measure/worker_messages.hpp"

namespace optune::measure::rpc {

class RpcSession {
 public:
  // Throws TransportError / AuthenticationError.
  static RpcSession open(const LeasedServer& server, const Token& token, double connect_timeout_seconds);
  const kernels::DeviceInfo& device() const { return device_; }  // the server's CPU
  const std::vector<kernels::DeviceInfo>& devices() const { return devices_; }  // the CPU, then OpenCL
  // The device the server measures `target` on (its CPU, or the OpenCL device the target names).
  // Throws NoSuchDeviceError (local_runner.hpp) naming the server's devices when the target names
  // none there, TransportError when the server cannot be reached.
  kernels::DeviceInfo describe(const std::string& target, double reply_timeout_seconds);
  // The worker's reply ({"status": ..., "costs": [...], "message": ...}); throws TransportError
  // when the server cannot be reached or gives no reply within `reply_timeout_seconds`.
  WorkerReply measure(const std::string& artifact_path, const WorkerRequest& request, double reply_timeout_seconds);

 private:
  explicit RpcSession(Channel channel) : channel_(std::move(channel)) {}
  Channel channel_;
  kernels::DeviceInfo device_;
  std::vector<kernels::DeviceInfo> devices_;
};

}  // namespace optune::measure::rpc
