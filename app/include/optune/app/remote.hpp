// Remote measurement as a front end asks for it: parsing KEY@HOST:PORT, reading the token,
// asking a tracker which device a server of the key measures a target on (its fingerprint goes
// into every record). Errors of the user's input or of reaching the tracker are BadInput.
#pragma once

#include <optional>
#include <string>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"
#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"

namespace optune::app {

struct RpcAddress {
  std::string key;
  measure::rpc::Endpoint tracker;
};
// "KEY@HOST:PORT".
RpcAddress parse_rpc_address(const std::string& text);
// Empty path: no token. A missing or empty file is BadInput (never printing its contents).
measure::rpc::Token load_token(const std::string& path);
// A listener beyond loopback without a token is BadInput.
void require_token_beyond_loopback(const std::string& what, const std::string& host, const measure::rpc::Token& token);
// The device a server of the key measures `target` on (its CPU, or the OpenCL device the target
// names), asked of a server leased briefly from the tracker (waiting up to `wait_seconds` for one);
// BadInput when none comes, the tracker or server refuses us, or the server has no device for
// the target.
kernels::DeviceInfo remote_device(const RpcAddress& address, const measure::rpc::Token& token, double wait_seconds,
                                  const std::string& target);

// Remote measurement: where, with which token, and the remote device.
struct Remote {
  RpcAddress address;
  measure::rpc::Token token;
  kernels::DeviceInfo device;
};
// nullopt for an empty `rpc`; else the remote of `rpc` (KEY@HOST:PORT) measuring `target`.
std::optional<Remote> find_remote(const std::string& rpc, const std::string& token_file, double wait_seconds,
                                  const std::string& target);
std::optional<Remote> find_remote(const std::string& rpc, const std::string& token_file, double wait_seconds,
                                  const kernels::Target& target);

}  // namespace optune::app
