// Listener: the accepting side that the tracker, the proxy and the server share. It binds a TCP
// port and gives every accepted connection its own thread and Channel, so one slow or malicious
// peer never holds up the others; SessionSlots caps how many are served at once, so many peers
// cannot exhaust threads or memory either.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <asio.hpp>

#include "optune/measure/rpc/channel.hpp"

namespace optune::measure::rpc {

// The tracker's and the proxy's default limit: each connection costs a thread and little memory.
inline constexpr std::size_t kDefaultMaxServiceSessions = 256;

// At most `limit` sessions at once. A Slot holds one for as long as it lives (a session's thread).
class SessionSlots {
 public:
  explicit SessionSlots(std::size_t limit) : limit_(limit) {}
  SessionSlots(const SessionSlots&) = delete;
  SessionSlots& operator=(const SessionSlots&) = delete;

  class Slot {
   public:
    Slot(Slot&& other) noexcept : slots_(std::exchange(other.slots_, nullptr)) {}
    Slot& operator=(Slot&&) = delete;
    Slot(const Slot&) = delete;
    ~Slot();

   private:
    friend class SessionSlots;
    explicit Slot(SessionSlots* slots) : slots_(slots) {}
    SessionSlots* slots_;
  };

  std::optional<Slot> try_take();  // nullopt while all are taken
  Slot take();                     // waits for a free one
  std::size_t limit() const { return limit_; }
  std::size_t taken() const;

 private:
  void give_back();
  const std::size_t limit_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::size_t taken_ = 0;
};

class Listener {
 public:
  Listener() : acceptor_(io_) {}
  // Binds host:port (reusing the address, so a restarted service gets its port back at once) and
  // listens; returns the bound port (the one chosen by the system for port 0). Throws
  // std::system_error when it cannot.
  unsigned short listen(const std::string& host, unsigned short port);
  // Accepts forever; a failed accept is logged and the loop goes on. A connection beyond the
  // slots is sent an error naming the limit (`service` says whose: "server", "tracker") and closed.
  [[noreturn]] void accept_forever(const std::function<void(Channel)>& handle,
                                   const std::function<void(const std::string&)>& log, SessionSlots& slots,
                                   const std::string& service);

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
};

// The message a connection beyond the limit is sent before it is closed.
std::string busy_message(const std::string& service, std::size_t limit);

}  // namespace optune::measure::rpc
