#include "rpc_support.hpp"

#include <filesystem>

#include "cli_support.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/rpc/rpc_session.hpp"
#include "optune/measure/rpc/tracker.hpp"

namespace optune::cli {
namespace fs = std::filesystem;
namespace {

constexpr double kConnectTimeoutSeconds = 10;
// The leased server is ours alone; its worker loads an OpenCL runtime (seconds) to describe a target.
constexpr double kDescribeTimeoutSeconds = 60;

}  // namespace

RpcAddress parse_rpc_address(const std::string& text) {
  auto at = text.find('@');
  if (at == std::string::npos || at == 0) throw UsageError("--rpc: expected KEY@HOST:PORT, got '" + text + "'");
  try {
    return {text.substr(0, at), measure::rpc::parse_endpoint(text.substr(at + 1))};
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("--rpc: ") + error.what());
  }
}

measure::rpc::Token load_token(const std::string& path) {
  if (path.empty()) return {};
  try {
    return measure::rpc::read_token_file(path);
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("--token-file: ") + error.what());
  }
}

void require_token_beyond_loopback(const std::string& what, const std::string& host, const measure::rpc::Token& token) {
  if (token.empty() && !measure::rpc::is_loopback_host(host))
    throw UsageError(what + " listens on " + host + ", beyond loopback: a token is required (--token-file)");
}

kernels::DeviceInfo remote_device(const RpcAddress& address, const measure::rpc::Token& token, double wait_seconds,
                                  const std::string& target) {
  std::string where = "tracker " + address.tracker.str();
  try {
    measure::rpc::TrackerClient tracker(address.tracker, token);
    auto leases = tracker.request_lease(address.key, 1, wait_seconds);
    if (leases.empty())
      throw UsageError("no device of key '" + address.key + "' at " + where + " within " +
                       std::to_string(static_cast<int>(wait_seconds)) + " s");
    where = "server " + leases.front().endpoint.str() + " of key '" + address.key + "'";
    auto session = measure::rpc::RpcSession::open(leases.front(), token, kConnectTimeoutSeconds);
    auto device = session.describe(target, kDescribeTimeoutSeconds);
    tracker.release(leases);
    return device;
  } catch (const measure::NoSuchDeviceError& error) {
    throw UsageError(where + ": " + error.what());
  } catch (const measure::rpc::TransportError& error) {
    throw UsageError(where + ": " + error.what());
  }
}

std::vector<std::string> target_description_dirs() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  std::vector<std::string> dirs;
  if (!error) dirs.push_back((self.parent_path().parent_path() / "share" / "optune" / "targets").string());
  dirs.push_back(std::string(OPTUNE_SOURCE_CONFIG_DIR) + "/targets");
  return dirs;
}

}  // namespace optune::cli
