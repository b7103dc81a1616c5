// The RPC listeners as a front end runs them (`optune rpc server | tracker | proxy | status`):
// options read from text (endpoints, token files, the worker's launcher), a listener bound (port
// 0 picks a free one) and announced once ready, then served until the process is killed.
// Malformed input and a port that cannot be bound are BadInput.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "optune/app/install_paths.hpp"
#include "optune/measure/rpc/proxy.hpp"
#include "optune/measure/rpc/rpc_server.hpp"
#include "optune/measure/rpc/tracker.hpp"

namespace optune::app {

// Where a listener's lines go: `announce` the ones a script waits for (stdout), `log` the rest.
struct ListenerOutput {
  std::function<void(const std::string&)> announce;
  measure::rpc::LogFunction log;
};

struct RpcServerRequest {
  measure::rpc::RpcServerOptions options;
  std::string tracker;     // HOST:PORT to register at ("" none)
  std::string proxy;       // HOST:PORT to serve through instead of listening ("" none)
  std::string token_file;  // "" no token
  std::string worker;      // "" the installation's
  std::string launcher;    // the worker runs under this command ("qemu-aarch64 -L ...")
  double max_artifact_mb = 64;
};

// Each serves until the process is killed.
void serve_rpc_server(const RpcServerRequest& request, const InstallPaths& paths, const ListenerOutput& output);
void serve_tracker(measure::rpc::TrackerOptions options, const std::string& token_file, const ListenerOutput& output);
void serve_proxy(measure::rpc::ProxyOptions options, const std::string& token_file, const ListenerOutput& output);

// A tracker's pool, leases and queue (TrackerClient::status). BadInput for a malformed address or
// a token the tracker refuses; std::runtime_error when it cannot be reached.
nlohmann::json tracker_status(const std::string& tracker, const std::string& token_file);

}  // namespace optune::app
