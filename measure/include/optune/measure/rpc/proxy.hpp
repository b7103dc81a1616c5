// Proxy (`optune rpc proxy`): for devices that cannot accept connections (phones behind NAT). A
// server dials out and leaves an idle connection registered under its key; a client asks the proxy
// for a server of a key, and the proxy joins the two connections and relays bytes both ways. The
// client then authenticates with the server end to end, as if connected directly.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/listener.hpp"
#include "optune/measure/rpc/rpc_server.hpp"

namespace optune::measure::rpc {

struct ProxyOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 9091;  // 0: any free port
  Token token;                 // asked of servers and clients alike
  std::size_t max_sessions = kDefaultMaxServiceSessions;  // connections handled at once
};

class Proxy {
 public:
  Proxy(ProxyOptions options, LogFunction log);
  unsigned short start();
  [[noreturn]] void serve();

 private:
  void connection(Channel channel, Admission& admission);
  void join(Channel& client, const std::string& key, double wait_seconds);
  ProxyOptions options_;
  LogFunction log_;
  Listener listener_;
  SessionSlots slots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::deque<std::unique_ptr<Channel>>> idle_;  // by key
};

// Client side: ask the proxy at `proxy` for a server of `key`; the returned channel then speaks
// to that server (its handshake comes next). Throws TransportError when none comes in time.
Channel connect_through_proxy(const Endpoint& proxy, const Token& token, const std::string& key,
                              double wait_seconds);

}  // namespace optune::measure::rpc
