#include "optune/measure/rpc/proxy.hpp"

#include <thread>

namespace optune::measure::rpc {
namespace {

using Seconds = Channel::Seconds;

// Copies bytes from one socket to the other until either side ends, then ends both.
void relay(asio::ip::tcp::socket& from, asio::ip::tcp::socket& to) {
  std::array<char, 64 * 1024> buffer;
  std::error_code error;
  for (;;) {
    std::size_t size = from.read_some(asio::buffer(buffer), error);
    if (error) break;
    asio::write(to, asio::buffer(buffer.data(), size), error);
    if (error) break;
  }
  std::error_code ignored;
  from.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  to.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace

Proxy::Proxy(ProxyOptions options, LogFunction log)
    : options_(std::move(options)), log_(std::move(log)), slots_(options_.max_sessions) {}

unsigned short Proxy::start() {
  return listener_.listen(options_.host, options_.port);
}

void Proxy::serve() {
  listener_.accept_forever(
      [this](Channel channel, Admission& admission) { connection(std::move(channel), admission); }, log_, slots_,
      "proxy");
}

void Proxy::connection(Channel channel, Admission& admission) {
  const std::string peer = channel.peer();
  try {
    accept_handshake(channel, options_.token, "proxy", [&admission] { admission.admit(); });
    channel.set_max_payload_bytes(0);
    Frame frame = channel.receive(kReplyTimeout);
    const std::string key = frame.metadata.value("key", std::string());
    if (frame.type == MessageType::kProxyRegister && !key.empty()) {
      std::lock_guard lock(mutex_);
      // Idle connections hold no thread but a descriptor each: as many as sessions, no more.
      std::size_t idle = 0;
      for (const auto& [name, waiting] : idle_) idle += waiting.size();
      if (idle >= options_.max_sessions) {
        channel.send_error("busy: this proxy holds at most " + std::to_string(options_.max_sessions) +
                           " idle server connections (its --max-sessions); try again later");
        return;
      }
      idle_[key].push_back(std::make_unique<Channel>(std::move(channel)));
      changed_.notify_all();
      log_("server " + peer + " waiting under " + key);
      return;
    }
    if (frame.type == MessageType::kProxyConnect && !key.empty()) {
      join(channel, key, frame.metadata.value("wait_seconds", 30.0));
      return;
    }
    channel.send_error("a proxy takes proxy_register or proxy_connect with a key, not " +
                       std::string(message_type_name(frame.type)));
  } catch (const AuthenticationError& error) {
    log_(peer + " refused: " + error.what());
  } catch (const std::exception& error) {
    log_(peer + ": " + error.what());
  }
}

void Proxy::join(Channel& client, const std::string& key, double wait_seconds) {
  std::unique_ptr<Channel> server;
  while (!server) {
    {
      std::unique_lock lock(mutex_);
      bool found = changed_.wait_for(lock, Seconds(std::clamp(wait_seconds, 0.0, 3600.0)), [&] {
        auto waiting = idle_.find(key);  // a key asked for is not made an entry: clients name any
        return waiting != idle_.end() && !waiting->second.empty();
      });
      if (!found) {
        client.send_error("no server of key " + key + " is connected to this proxy");
        return;
      }
      auto& waiting = idle_[key];
      server = std::move(waiting.front());
      waiting.pop_front();
      if (waiting.empty()) idle_.erase(key);
    }
    try {
      server->send({MessageType::kProxyStart, {}, {}}, kReplyTimeout);
    } catch (const std::exception&) {
      server.reset();  // that server went away while idle: try the next
    }
  }
  client.send({MessageType::kProxyStart, {}, {}}, kReplyTimeout);
  log_("joined " + client.peer() + " to server " + server->peer() + " (" + key + ")");
  std::thread upstream([&] { relay(client.socket(), server->socket()); });
  relay(server->socket(), client.socket());
  upstream.join();
}

Channel connect_through_proxy(const Endpoint& proxy, const Token& token, const std::string& key,
                              double wait_seconds) {
  Channel channel = Channel::connect(proxy, Seconds(10));
  connect_handshake(channel, token, {{"role", "client"}});
  channel.send({MessageType::kProxyConnect, {{"key", key}, {"wait_seconds", wait_seconds}}, {}}, kReplyTimeout);
  expect(channel, MessageType::kProxyStart, Seconds(wait_seconds) + kReplyTimeout);
  return channel;
}

}  // namespace optune::measure::rpc
