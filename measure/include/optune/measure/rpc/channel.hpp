// Channel: one TCP connection that sends and receives frames, every operation under an explicit
// deadline (asio's asynchronous operations, run on the channel's own io_context until done or
// the deadline passes), so a silent or slow peer never hangs the caller. One thread uses a
// channel at a time; servers give each connection its own thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <asio.hpp>

#include "optune/measure/rpc/frame.hpp"

namespace optune::measure::rpc {

// A transport failure: connection refused, reset or closed, a deadline passed, a malformed frame.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "host:port" -> parts; throws std::invalid_argument naming the text.
struct Endpoint {
  std::string host;
  unsigned short port = 0;
  std::string str() const { return host + ":" + std::to_string(port); }
};
Endpoint parse_endpoint(const std::string& text);
// Whether a host to listen on is this machine's loopback only (no token needed there).
bool is_loopback_host(const std::string& host);

// Silence in the middle of a frame after which the frame is given up (seconds): the handshake's
// timeout, for the same reason. A peer slower than this between two packets is not a peer.
inline constexpr double kDefaultStallSeconds = 10;

class Channel {
 public:
  using Seconds = std::chrono::duration<double>;

  // Throws TransportError when the peer cannot be reached within the timeout.
  static Channel connect(const Endpoint& endpoint, Seconds timeout);
  // Takes an accepted socket (whose io_context the channel then owns).
  Channel(std::unique_ptr<asio::io_context> io, asio::ip::tcp::socket socket);
  Channel(Channel&&) noexcept;
  Channel& operator=(Channel&&) noexcept;
  ~Channel();

  // Both throw TransportError (FrameError's message for a malformed frame).
  void send(const Frame& frame, Seconds timeout);
  // Waits up to `timeout` for a frame to begin; once its first byte is here, the rest must keep
  // coming: silence of the stall timeout in the middle of a frame ends it, as a handshake ends. The
  // metadata and payload are read into buffers that grow as their bytes arrive (never to the
  // announced size up front), so a peer that announces much and sends little holds little memory.
  Frame receive(Seconds timeout);
  // Payloads over this are refused (a FrameError) before any of their bytes are read.
  void set_max_payload_bytes(std::uint32_t bytes) { max_payload_bytes_ = bytes; }
  void set_stall_timeout(Seconds timeout) { stall_timeout_ = timeout; }

  // Sends a kError frame if it can, never throws.
  void send_error(const std::string& message) noexcept;
  std::string peer() const;        // "host:port" of the other end
  std::string local_host() const;  // this end's address (what a tracker peer can reach us at)
  bool is_open() const;
  void close() noexcept;
  asio::ip::tcp::socket& socket() { return *socket_; }

 private:
  Channel() = default;
  // Whatever has arrived (at least one byte), waiting up to `timeout` for it.
  std::size_t read_some(char* data, std::size_t size, Seconds timeout, const char* what);
  // `size` bytes, each read making progress within the stall timeout and all before `deadline`.
  void read_rest(char* data, std::size_t size, std::chrono::steady_clock::time_point deadline);
  std::string read_growing(std::size_t size, std::chrono::steady_clock::time_point deadline);
  std::unique_ptr<asio::io_context> io_;
  std::unique_ptr<asio::ip::tcp::socket> socket_;
  std::uint32_t max_payload_bytes_ = kDefaultMaxPayloadBytes;
  Seconds stall_timeout_{kDefaultStallSeconds};
};

// How long the tracker and the proxy wait for a peer to take or answer a frame of theirs.
inline constexpr Channel::Seconds kReplyTimeout{30};

// Receives a frame and checks its type; a kError frame from the peer becomes a TransportError
// with the peer's message, any other type a TransportError naming both.
Frame expect(Channel& channel, MessageType type, Channel::Seconds timeout);

}  // namespace optune::measure::rpc
