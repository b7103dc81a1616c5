#include "optune/measure/rpc/channel.hpp"

#include <charconv>

namespace optune::measure::rpc {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kStalled = "receiving the rest of a frame";

// Runs the io_context until the started operation completes or the deadline passes; at the
// deadline the socket is closed, which completes the operation with operation_aborted.
void run_until_done(asio::io_context& io, asio::ip::tcp::socket& socket, Channel::Seconds timeout,
                    const std::error_code& result, const char* what) {
  io.restart();
  io.run_for(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  if (!io.stopped()) {
    std::error_code ignored;
    socket.close(ignored);
    io.run();  // let the aborted handler run
    throw TransportError(std::string(what) + ": no answer within " + std::to_string(timeout.count()) + " s");
  }
  if (result == asio::error::eof) throw TransportError(std::string(what) + ": the peer closed the connection");
  if (result) throw TransportError(std::string(what) + ": " + result.message());
}

}  // namespace

Endpoint parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("expected HOST:PORT, got '" + text + "'");
  Endpoint endpoint{text.substr(0, colon), 0};
  unsigned port = 0;
  const char* begin = text.data() + colon + 1;
  const char* end = text.data() + text.size();
  auto [rest, error] = std::from_chars(begin, end, port);
  if (error != std::errc() || rest != end || begin == end || port > 65535)
    throw std::invalid_argument("bad port in '" + text + "'");
  endpoint.port = static_cast<unsigned short>(port);
  return endpoint;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  std::error_code error;
  auto address = asio::ip::make_address(host, error);
  return !error && address.is_loopback();
}

Channel Channel::connect(const Endpoint& endpoint, Seconds timeout) {
  Channel channel;
  channel.io_ = std::make_unique<asio::io_context>();
  channel.socket_ = std::make_unique<asio::ip::tcp::socket>(*channel.io_);
  asio::ip::tcp::resolver resolver(*channel.io_);
  std::error_code error;
  auto endpoints = resolver.resolve(endpoint.host, std::to_string(endpoint.port), error);
  if (error) throw TransportError("cannot resolve " + endpoint.str() + ": " + error.message());
  std::error_code result;
  asio::async_connect(*channel.socket_, endpoints,
                      [&](const std::error_code& e, const asio::ip::tcp::endpoint&) { result = e; });
  run_until_done(*channel.io_, *channel.socket_, timeout, result, ("connecting to " + endpoint.str()).c_str());
  channel.socket_->set_option(asio::ip::tcp::no_delay(true), error);
  return channel;
}

Channel::Channel(std::unique_ptr<asio::io_context> io, asio::ip::tcp::socket socket)
    : io_(std::move(io)), socket_(std::make_unique<asio::ip::tcp::socket>(std::move(socket))) {
  std::error_code ignored;
  socket_->set_option(asio::ip::tcp::no_delay(true), ignored);
}
Channel::Channel(Channel&&) noexcept = default;
Channel& Channel::operator=(Channel&&) noexcept = default;
Channel::~Channel() { close(); }

void Channel::send(const Frame& frame, Seconds timeout) {
  if (!is_open()) throw TransportError("sending on a closed connection");
  std::string head;
  try {
    head = encode_frame_head(frame);
  } catch (const FrameError& error) {
    throw TransportError(error.what());
  }
  std::array<asio::const_buffer, 2> buffers = {asio::buffer(head), asio::buffer(frame.payload)};
  std::error_code result;
  asio::async_write(*socket_, buffers, [&](const std::error_code& e, std::size_t) { result = e; });
  run_until_done(*io_, *socket_, timeout, result, "sending");
}

std::size_t Channel::read_some(char* data, std::size_t size, Seconds timeout, const char* what) {
  std::error_code result;
  std::size_t received = 0;
  socket_->async_read_some(asio::buffer(data, size), [&](const std::error_code& e, std::size_t n) {
    result = e;
    received = n;
  });
  run_until_done(*io_, *socket_, timeout, result, what);
  return received;
}

void Channel::read_rest(char* data, std::size_t size, Clock::time_point deadline) {
  for (std::size_t done = 0; done < size;) {
    const Seconds left = deadline - Clock::now();
    if (left <= Seconds(0)) throw TransportError("receiving: the frame did not arrive in time");
    done += read_some(data + done, size - done, std::min(left, stall_timeout_), kStalled);
  }
}

std::string Channel::read_growing(std::size_t size, Clock::time_point deadline) {
  // Each step asks for at most as much again as has arrived (64 KiB to begin with): the buffer is
  // never more than twice what the peer has actually sent.
  constexpr std::size_t kFirstStep = 64 * 1024;
  std::string bytes;
  while (bytes.size() < size) {
    const std::size_t before = bytes.size();
    const std::size_t step = std::min(size - before, std::max(before, kFirstStep));
    bytes.resize(before + step);
    const Seconds left = deadline - Clock::now();
    if (left <= Seconds(0)) throw TransportError("receiving: the frame did not arrive in time");
    bytes.resize(before + read_some(bytes.data() + before, step, std::min(left, stall_timeout_), kStalled));
  }
  return bytes;
}

Frame Channel::receive(Seconds timeout) {
  if (!is_open()) throw TransportError("receiving on a closed connection");
  std::array<char, kHeaderBytes> header_bytes;
  const std::size_t begun = read_some(header_bytes.data(), header_bytes.size(), timeout, "receiving");
  // Begun: the rest gets as long again, without a silence over the stall timeout.
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  read_rest(header_bytes.data() + begun, header_bytes.size() - begun, deadline);
  Frame frame;
  try {
    FrameHeader header = decode_frame_header(header_bytes, max_payload_bytes_);
    frame.type = header.type;
    frame.metadata = decode_metadata(read_growing(header.metadata_bytes, deadline));
    frame.payload = read_growing(header.payload_bytes, deadline);
  } catch (const FrameError& error) {
    // The stream is out of step after a bad frame: tell the peer why and drop the connection.
    send_error(error.what());
    close();
    throw TransportError(error.what());
  }
  return frame;
}

void Channel::send_error(const std::string& message) noexcept {
  try {
    if (is_open()) send({MessageType::kError, {{"message", message}}, {}}, Seconds(2));
  } catch (...) {
  }
}

std::string Channel::peer() const {
  std::error_code error;
  auto endpoint = socket_->remote_endpoint(error);
  return error ? "?" : endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

std::string Channel::local_host() const {
  std::error_code error;
  auto endpoint = socket_->local_endpoint(error);
  return error ? "" : endpoint.address().to_string();
}

bool Channel::is_open() const { return socket_ && socket_->is_open(); }

void Channel::close() noexcept {
  if (!socket_) return;
  std::error_code ignored;
  socket_->shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_->close(ignored);
}

Frame expect(Channel& channel, MessageType type, Channel::Seconds timeout) {
  Frame frame = channel.receive(timeout);
  if (frame.type == type) return frame;
  if (frame.type == MessageType::kError)
    throw TransportError("peer: " + frame.metadata.value("message", std::string("error without a message")));
  throw TransportError("expected a " + std::string(message_type_name(type)) + " message, got " +
                       std::string(message_type_name(frame.type)));
}

}  // namespace optune::measure::rpc
