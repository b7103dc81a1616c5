#include "optune/measure/rpc/listener.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "optune/measure/rpc/auth.hpp"

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

PendingHandshakes::Ticket::~Ticket() {
  if (pending_) pending_->leave(id_);
}

std::pair<PendingHandshakes::Ticket, std::size_t> PendingHandshakes::enter(const std::string& address, int socket) {
  std::lock_guard lock(mutex_);
  std::size_t given_up = 0;
  const auto same_address = [&](const Entry& entry) { return entry.address == address; };
  if (static_cast<std::size_t>(std::count_if(entries_.begin(), entries_.end(), same_address)) >= per_address_) {
    give_up(std::find_if(entries_.begin(), entries_.end(), same_address));
    ++given_up;
  }
  if (entries_.size() >= limit_) {
    give_up(entries_.begin());
    ++given_up;
  }
  const std::uint64_t id = next_id_++;
  entries_.push_back({id, address, ::dup(socket)});
  return {Ticket(this, id), given_up};
}

std::size_t PendingHandshakes::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void PendingHandshakes::give_up(std::list<Entry>::iterator entry) {
  // Its handshake's next read ends at once; the thread that runs it closes the connection.
  if (entry->descriptor >= 0) {
    ::shutdown(entry->descriptor, SHUT_RD);
    ::close(entry->descriptor);
  }
  entries_.erase(entry);
}

void PendingHandshakes::leave(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  auto entry = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.id == id; });
  if (entry == entries_.end()) return;  // it gave up for a newer one
  if (entry->descriptor >= 0) ::close(entry->descriptor);
  entries_.erase(entry);
}

void Admission::admit() {
  ticket_.reset();
  auto slot = slots_.try_take();
  if (!slot) throw ServiceBusy(busy_message(service_, slots_.limit()));
  slot_.emplace(std::move(*slot));
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

void Listener::accept_forever(const std::function<void(Channel, Admission&)>& handle,
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
    std::error_code no_address;
    const auto remote = socket.remote_endpoint(no_address);
    const std::string address = no_address ? std::string("?") : remote.address().to_string();
    auto [ticket, given_up] = pending_.enter(address, socket.native_handle());
    if (given_up > 0)
      log("closed " + std::to_string(given_up) + " connection(s) still in their handshake to make way for one from " +
          address + " (" + std::to_string(kMaxPendingHandshakes) + " at most, " +
          std::to_string(kMaxPendingPerAddress) + " an address)");
    Channel channel(std::move(io), std::move(socket));
    std::thread([handle, channel = std::move(channel),
                 admission = std::make_unique<Admission>(std::move(ticket), slots, service)]() mutable {
      handle(std::move(channel), *admission);
    }).detach();
  }
}

}  // namespace optune::measure::rpc
