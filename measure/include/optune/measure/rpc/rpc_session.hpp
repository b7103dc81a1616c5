// RpcSession: a client's authenticated connection to one server (directly or through a proxy):
// ships an artifact file with its worker request and returns the worker's reply.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "optune/kernels/device_info.hpp"
#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/tracker.hpp"

namespace optune::measure::rpc {

class RpcSession {
 public:
  // Throws TransportError / AuthenticationError.
  static RpcSession open(const LeasedServer& server, const Token& token, double connect_timeout_seconds);
  const kernels::DeviceInfo& device() const { return device_; }
  // The worker's reply ({"status": ..., "costs": [...], "message": ...}); throws TransportError
  // when the server cannot be reached or gives no reply within `reply_timeout_seconds`.
  nlohmann::json measure(const std::string& artifact_path, const nlohmann::json& request, double reply_timeout_seconds);

 private:
  explicit RpcSession(Channel channel) : channel_(std::move(channel)) {}
  Channel channel_;
  kernels::DeviceInfo device_;
};

}  // namespace optune::measure::rpc
