// Listener: the accepting side that the tracker, the proxy and the server share. It binds a TCP
// port and gives every accepted connection its own thread and Channel, so one slow or malicious
// peer never holds up the others. Two caps keep many peers from exhausting threads or memory:
// connections still in their handshake (anyone can open those) are PendingHandshakes, whose oldest
// make way for new ones; only a peer that proved the token takes one of the SessionSlots, so idle
// unauthenticated connections never keep an authenticated client out.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
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

// Connections that have not finished their handshake (accept_handshake), at most `limit` in all
// and `per_address` from one address. A new connection beyond either makes the oldest of them
// (of its address first) give up: its socket's reading side is shut, so its handshake fails at
// once. A genuine peer answers the challenge within a round trip, so it is never the oldest for
// long, whereas idle connections (a scan, a flood) are, and go first. A Ticket holds a place.
inline constexpr std::size_t kMaxPendingHandshakes = 128;
inline constexpr std::size_t kMaxPendingPerAddress = 16;

class PendingHandshakes {
 public:
  PendingHandshakes(std::size_t limit, std::size_t per_address) : limit_(limit), per_address_(per_address) {}
  PendingHandshakes(const PendingHandshakes&) = delete;
  PendingHandshakes& operator=(const PendingHandshakes&) = delete;

  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept
        : pending_(std::exchange(other.pending_, nullptr)), id_(other.id_) {}
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket();

   private:
    friend class PendingHandshakes;
    Ticket(PendingHandshakes* pending, std::uint64_t id) : pending_(pending), id_(id) {}
    PendingHandshakes* pending_;
    std::uint64_t id_;
  };

  // A place for the connection on `socket` (the listener's to shut while the ticket lives: it
  // keeps a duplicate of the descriptor, so a closed one is never reused under it), making way
  // as above. Returns the ticket and how many connections gave up for it.
  std::pair<Ticket, std::size_t> enter(const std::string& address, int socket);
  std::size_t size() const;

 private:
  struct Entry {
    std::uint64_t id;
    std::string address;
    int descriptor;  // a dup() of the connection's socket, closed when the ticket ends
  };
  void leave(std::uint64_t id);
  void give_up(std::list<Entry>::iterator entry);  // under mutex_
  const std::size_t limit_;
  const std::size_t per_address_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // oldest first
  std::uint64_t next_id_ = 0;
};

// What a connection's handler gets besides its channel: its place among the pending handshakes,
// to be traded for a session slot once the peer proved the token (accept_handshake's `admit`).
class Admission {
 public:
  Admission(PendingHandshakes::Ticket ticket, SessionSlots& slots, std::string service)
      : ticket_(std::move(ticket)), slots_(slots), service_(std::move(service)) {}
  // Gives up the handshake's place and takes a session slot for as long as this lives; throws
  // ServiceBusy (auth.hpp) naming the limit when all are taken.
  void admit();

 private:
  std::optional<PendingHandshakes::Ticket> ticket_;
  SessionSlots& slots_;
  std::string service_;
  std::optional<SessionSlots::Slot> slot_;
};

class Listener {
 public:
  Listener() : acceptor_(io_) {}
  // Binds host:port (reusing the address, so a restarted service gets its port back at once) and
  // listens; returns the bound port (the one chosen by the system for port 0). Throws
  // std::system_error when it cannot.
  unsigned short listen(const std::string& host, unsigned short port);
  // Accepts forever; a failed accept is logged and the loop goes on. Each connection is handled
  // on a thread of its own with its Admission, which the handler passes to accept_handshake: a
  // peer that proves the token beyond the slots is told the service is busy, naming the limit
  // (`service` says whose: "server", "tracker").
  [[noreturn]] void accept_forever(const std::function<void(Channel, Admission&)>& handle,
                                   const std::function<void(const std::string&)>& log, SessionSlots& slots,
                                   const std::string& service);

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  PendingHandshakes pending_{kMaxPendingHandshakes, kMaxPendingPerAddress};
};

// The message a connection beyond the limit is sent before it is closed.
std::string busy_message(const std::string& service, std::size_t limit);

}  // namespace optune::measure::rpc
