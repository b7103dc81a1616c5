// RpcServer (`optune rpc server`): runs on the device. Clients connect (directly, or through a
// proxy the server dials out to), authenticate, and send candidates: an artifact file and the
// worker request that measures it. The server keeps each artifact inside its work directory under
// a name of its own choosing, measures it with LocalRunner (its own isolated worker process, the
// request's timing policy and correctness check, exactly as local measurement) and returns the
// worker's reply. It knows nothing of what an artifact contains, so any backend whose worker
// measures a file works over RPC (shared objects for CPU targets; for OpenCL targets a JSON file
// of source and build options, compiled on the device through the server's program cache). It
// reports its devices (the CPU and every OpenCL device) to the tracker and to clients, and
// describes the device of a client's target on request. One candidate is measured at a time; a
// client that disconnects, a candidate that crashes and a malformed message end at most that
// client's session.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/listener.hpp"

namespace optune::measure::rpc {

using LogFunction = std::function<void(const std::string&)>;

inline constexpr std::size_t kDefaultMaxServerSessions = 16;

// What is wrong with a measure message's metadata, checked as the worker will read it before
// any of its payload is written; "" when nothing is.
std::string measure_request_problem(const nlohmann::json& metadata);

struct RpcServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 9090;  // 0: any free port (start() returns it)
  std::string key = "default";  // the kind of device, as clients ask a tracker for it
  std::optional<Endpoint> tracker;  // register there and keep heartbeats going
  std::optional<Endpoint> proxy;    // dial out to it and serve the clients it joins to us
  Token token;
  std::string work_dir;  // artifacts live here while measured; "" = a fresh temp dir
  std::string worker_path;
  std::vector<std::string> worker_launcher;  // e.g. qemu-aarch64 -L <sysroot>
  std::string program_cache_dir;  // OpenCL program binaries; "" = <work dir>/opencl-cache
  std::uint32_t max_artifact_bytes = 64u << 20;
  double heartbeat_seconds = 2;       // to the tracker
  double reconnect_seconds = 1;       // after losing the tracker or proxy
  double idle_session_seconds = 3600;  // a client silent this long is dropped
  double frame_stall_seconds = kDefaultStallSeconds;  // silence mid-frame that ends a session
  // Clients served at once; one more is told the server is busy. Each may hold an artifact of up
  // to max_artifact_bytes in memory while it waits for the worker.
  std::size_t max_sessions = kDefaultMaxServerSessions;
};

class RpcServer {
 public:
  RpcServer(RpcServerOptions options, LogFunction log);
  ~RpcServer();
  // Binds and asks the worker for the devices; returns the bound port. Throws on failure.
  unsigned short start();
  // Serves until the process ends.
  [[noreturn]] void serve();
  const kernels::DeviceInfo& device() const { return device_; }  // the CPU
  const std::vector<kernels::DeviceInfo>& devices() const { return devices_; }  // the CPU first, then OpenCL

 private:
  // `admission`: null for a connection the server made to a proxy (its slot already taken).
  void session(Channel channel, Admission* admission);
  Frame measure(const Frame& request);
  Frame describe(const Frame& request);
  nlohmann::json devices_json() const;
  void keep_registered();
  void keep_proxy_connection();
  RpcServerOptions options_;
  LogFunction log_;
  std::string work_dir_;
  bool owns_work_dir_ = false;
  kernels::DeviceInfo device_;
  std::vector<kernels::DeviceInfo> devices_;
  std::string program_cache_dir_;
  Listener listener_;
  unsigned short bound_port_ = 0;
  SessionSlots slots_;
  std::mutex measure_mutex_;  // one candidate (or description) at a time from the worker
  std::map<std::string, nlohmann::json> descriptions_;  // target -> description reply; guarded by measure_mutex_
  LocalRunner runner_;
  std::atomic<std::uint64_t> next_artifact_ = 0;
};

}  // namespace optune::measure::rpc
