#include "optune/measure/rpc/listener.hpp"

#include <memory>
#include <thread>

namespace optune::measure::rpc {

unsigned short Listener::listen(const std::string& host, unsigned short port) {
  asio::ip::tcp::endpoint endpoint(asio::ip::make_address(host), port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen();
  return acceptor_.local_endpoint().port();
}

void Listener::accept_forever(const std::function<void(Channel)>& handle,
                              const std::function<void(const std::string&)>& log) {
  for (;;) {
    auto io = std::make_unique<asio::io_context>();
    std::error_code error;
    asio::ip::tcp::socket socket = acceptor_.accept(*io, error);
    if (error) {
      log("accept: " + error.message());
      continue;
    }
    std::thread([handle, channel = Channel(std::move(io), std::move(socket))]() mutable {
      handle(std::move(channel));
    }).detach();
  }
}

}  // namespace optune::measure::rpc
