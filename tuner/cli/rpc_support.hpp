// What `optune tune --rpc` and `optune rpc ...` share: parsing KEY@HOST:PORT, reading the token,
// asking a tracker for a device's fingerprint, and finding cross-compilation target descriptions.
#pragma once

#include <string>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"

namespace optune::cli {

struct RpcAddress {
  std::string key;
  measure::rpc::Endpoint tracker;
};
// "KEY@HOST:PORT"; throws UsageError.
RpcAddress parse_rpc_address(const std::string& text);
// Empty path: no token. Throws UsageError for a missing or empty file (never printing its contents).
measure::rpc::Token load_token(const std::string& path);
// A listener beyond loopback without a token: UsageError.
void require_token_beyond_loopback(const std::string& what, const std::string& host, const measure::rpc::Token& token);
// The device a server of the key measures `target` on (its CPU, or the OpenCL device the target
// names), asked of a server leased briefly from the tracker (waiting up to `wait_seconds` for one);
// throws UsageError when none comes, the tracker or server refuses us, or the server has no
// device for the target.
kernels::DeviceInfo remote_device(const RpcAddress& address, const measure::rpc::Token& token, double wait_seconds,
                                  const std::string& target);
// Where target descriptions are looked for: installed share/optune/targets, then the source tree.
std::vector<std::string> target_description_dirs();

}  // namespace optune::cli
