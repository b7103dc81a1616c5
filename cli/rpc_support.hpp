// What `optune tune --rpc` and `optune rpc ...` share: the library's address, token and remote
// device helpers (optune/app/remote.hpp).
#pragma once

#include "optune/app/remote.hpp"

namespace optune::cli {

using app::RpcAddress;
using app::load_token;
using app::parse_rpc_address;
using app::remote_device;
using app::require_token_beyond_loopback;

}  // namespace optune::cli
