#include "optune/measure/rpc/listener.hpp"

#include <memory>
#include <thread>

namespace optune::measure::rpc {

SessionSlots::Slot::~Slot() {
  if (slots_) slots_->give_back();
}

std::optional<SessionSlots::Slot> SessionSlots::try_take() {
  std::lock_guard lock(mutex_);
  if (taken_ >= limit_) return std::nullopt;
  ++taken_;
  return Slot(this);
}

SessionSlots::Slot SessionSlots::take() {
  std::unique_lock lock(mutex_);
  freed_.wait(lock, [&] { return taken_ < limit_; });
  ++taken_;
  return Slot(this);
}

std::size_t SessionSlots::taken() const {
  std::lock_guard lock(mutex_);
  return taken_;
}

void SessionSlots::give_back() {
  {
    std::lock_guard lock(mutex_);
    --taken_;
  }
  freed_.notify_one();
}

std::string busy_message(const std::string& service, std::size_t limit) {
  return "busy: this " + service + " serves at most " + std::to_string(limit) +
         " connections at once (its --max-sessions) and has that many open; try again later";
}

unsigned short Listener::listen(const std::string& host, unsigned short port) {
  asio::ip::tcp::endpoint endpoint(asio::ip::make_address(host), port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen();
  return acceptor_.local_endpoint().port();
}

void Listener::accept_forever(const std::function<void(Channel)>& handle,
                              const std::function<void(const std::string&)>& log, SessionSlots& slots,
                              const std::string& service) {
  for (;;) {
    auto io = std::make_unique<asio::io_context>();
    std::error_code error;
    asio::ip::tcp::socket socket = acceptor_.accept(*io, error);
    if (error) {
      log("accept: " + error.message());
      continue;
    }
    Channel channel(std::move(io), std::move(socket));
    auto slot = slots.try_take();
    if (!slot) {
      // On this thread: a small frame into a fresh socket's buffer, sent at once or given up
      // after send_error's two seconds.
      log("refused " + channel.peer() + ": " + std::to_string(slots.limit()) + " sessions open");
      channel.send_error(busy_message(service, slots.limit()));
      continue;  // the channel closes here
    }
    std::thread([handle, channel = std::move(channel), slot = std::move(*slot)]() mutable {
      handle(std::move(channel));
    }).detach();
  }
}

}  // namespace optune::measure::rpc
