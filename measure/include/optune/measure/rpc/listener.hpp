// Listener: the accepting side that the tracker, the proxy and the server share. It binds a TCP
// port and gives every accepted connection its own thread and Channel, so one slow or malicious
// peer never holds up the others.
#pragma once

#include <functional>
#include <string>

#include <asio.hpp>

#include "optune/measure/rpc/channel.hpp"

namespace optune::measure::rpc {

class Listener {
 public:
  Listener() : acceptor_(io_) {}
  // Binds host:port (reusing the address, so a restarted service gets its port back at once) and
  // listens; returns the bound port (the one chosen by the system for port 0). Throws
  // std::system_error when it cannot.
  unsigned short listen(const std::string& host, unsigned short port);
  // Accepts forever; a failed accept is logged and the loop goes on.
  [[noreturn]] void accept_forever(const std::function<void(Channel)>& handle,
                                   const std::function<void(const std::string&)>& log);

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
};

}  // namespace optune::measure::rpc
