#include "optune/app/remote.hpp"

#include "optune/app/bad_input.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/target.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/rpc/rpc_session.hpp"
#include "optune/measure/rpc/tracker.hpp"

namespace optune::app {
namespace {

constexpr double kConnectTimeoutSeconds = 10;
// The leased server is ours alone; its worker loads an OpenCL runtime (seconds) to describe a target.
constexpr double kDescribeTimeoutSeconds = 60;

}  // namespace

RpcAddress parse_rpc_address(const std::string& text) {
  auto at = text.find('@');
  if (at == std::string::npos || at == 0) throw BadInput("--rpc: expected KEY@HOST:PORT, got '" + text + "'");
  try {
    return {text.substr(0, at), measure::rpc::parse_endpoint(text.substr(at + 1))};
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("--rpc: ") + error.what());
  }
}

measure::rpc::Token load_token(const std::string& path) {
  if (path.empty()) return {};
  try {
    return measure::rpc::read_token_file(path);
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("--token-file: ") + error.what());
  }
}

void require_token_beyond_loopback(const std::string& what, const std::string& host, const measure::rpc::Token& token) {
  if (token.empty() && !measure::rpc::is_loopback_host(host))
    throw BadInput(what + " listens on " + host + ", beyond loopback: a token is required (--token-file)");
}

kernels::DeviceInfo remote_device(const RpcAddress& address, const measure::rpc::Token& token, double wait_seconds,
                                  const std::string& target) {
  std::string where = "tracker " + address.tracker.str();
  try {
    measure::rpc::TrackerClient tracker(address.tracker, token);
    auto leases = tracker.request_lease(address.key, 1, wait_seconds);
    if (leases.empty())
      throw BadInput("no device of key '" + address.key + "' at " + where + " within " +
                     std::to_string(static_cast<int>(wait_seconds)) + " s");
    where = "server " + leases.front().endpoint.str() + " of key '" + address.key + "'";
    auto session = measure::rpc::RpcSession::open(leases.front(), token, kConnectTimeoutSeconds);
    auto device = session.describe(target, kDescribeTimeoutSeconds);
    tracker.release(leases);
    return device;
  } catch (const measure::NoSuchDeviceError& error) {
    throw BadInput(where + ": " + error.what());
  } catch (const measure::rpc::TransportError& error) {
    throw BadInput(where + ": " + error.what());
  }
}

std::optional<Remote> find_remote(const std::string& rpc, const std::string& token_file, double wait_seconds,
                                  const std::string& target) {
  if (rpc.empty()) return std::nullopt;
  kernels::Target parsed;
  try {
    parsed = backends::parse_target(target);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  return find_remote(rpc, token_file, wait_seconds, parsed);
}

std::optional<Remote> find_remote(const std::string& rpc, const std::string& token_file, double wait_seconds,
                                  const kernels::Target& target) {
  if (rpc.empty()) return std::nullopt;
  Remote remote{parse_rpc_address(rpc), load_token(token_file), {}};
  // The server says which device it measures the target on: records carry that device.
  remote.device = remote_device(remote.address, remote.token, wait_seconds, target.str());
  return remote;
}

}  // namespace optune::app
