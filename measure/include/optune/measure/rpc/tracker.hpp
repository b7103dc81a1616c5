// Tracker (`optune rpc tracker`): the pool of devices. Servers register under a key and keep a
// heartbeat going on their registration connection; one that stops answering (or whose connection
// drops) leaves the pool. Clients ask for devices of a key and get leases; requests wait in a
// first-come queue per key while every device of the key is leased. A lease ends when released or
// when its client's connection closes, so a crashed tuner never holds a device.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/listener.hpp"
#include "optune/measure/rpc/rpc_server.hpp"

namespace optune::measure::rpc {

struct TrackerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 9190;  // 0: any free port
  Token token;
  double heartbeat_timeout_seconds = 10;  // silence after which a server leaves the pool
  // Connections handled at once: every registered server holds one, every client one.
  std::size_t max_sessions = kDefaultMaxServiceSessions;
};

class Tracker {
 public:
  Tracker(TrackerOptions options, LogFunction log);
  unsigned short start();  // binds; returns the port
  [[noreturn]] void serve();

 private:
  struct Server {
    std::string key, host;
    unsigned short port = 0;
    bool via_proxy = false;
    nlohmann::json device;   // its CPU's fingerprint
    nlohmann::json devices;  // every device (the CPU, then OpenCL): kind, name, platform, for status
    std::int64_t lease = 0;  // 0: free
  };
  struct Lease {
    std::int64_t server = 0;
    std::string client;
  };
  void connection(Channel channel, Admission& admission);
  void serve_server(Channel& channel, const Frame& registration);
  void serve_client(Channel& channel, Frame first);
  nlohmann::json lease(const nlohmann::json& request, const std::string& client, std::vector<std::int64_t>& held);
  void release(std::int64_t lease_id);
  nlohmann::json status();

  TrackerOptions options_;
  LogFunction log_;
  Listener listener_;
  SessionSlots slots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::int64_t, Server> servers_;
  std::map<std::int64_t, Lease> leases_;
  struct Waiting {
    std::int64_t ticket;
    std::string key, client;
    double since;
  };
  std::deque<Waiting> queue_;
  std::int64_t next_id_ = 1;
};

// The client side of a tracker connection. Leases live as long as this connection.
struct LeasedServer {
  std::int64_t lease = 0;
  std::string key;
  Endpoint endpoint;
  bool via_proxy = false;
  nlohmann::json device;
};

class TrackerClient {
 public:
  // Throws TransportError / AuthenticationError.
  TrackerClient(const Endpoint& tracker, const Token& token, double timeout_seconds = 10);
  // Up to `max_count` free devices of `key`, waiting in the queue up to `wait_seconds` for at least
  // one; empty when none came. `prefer`: that server first where it is free.
  std::vector<LeasedServer> request_lease(const std::string& key, std::size_t max_count, double wait_seconds,
                                          const std::optional<Endpoint>& prefer = std::nullopt);
  void release(const std::vector<LeasedServer>& leases);
  nlohmann::json status();
  const Endpoint& endpoint() const { return endpoint_; }

 private:
  Endpoint endpoint_;
  Channel channel_;
  double timeout_seconds_;
};

}  // namespace optune::measure::rpc
