#include "optune/measure/rpc/tracker.hpp"

#include <algorithm>
#include <thread>

#include "optune/kernels/device_info.hpp"
#include "optune/measure/measure_result.hpp"

namespace optune::measure::rpc {
namespace {

using Seconds = Channel::Seconds;
constexpr Seconds kIdleClientTimeout{24 * 3600};

}  // namespace

Tracker::Tracker(TrackerOptions options, LogFunction log)
    : options_(std::move(options)), log_(std::move(log)), slots_(options_.max_sessions) {}

unsigned short Tracker::start() {
  return listener_.listen(options_.host, options_.port);
}

void Tracker::serve() {
  listener_.accept_forever(
      [this](Channel channel, Admission& admission) { connection(std::move(channel), admission); }, log_, slots_,
      "tracker");
}

void Tracker::connection(Channel channel, Admission& admission) {
  const std::string peer = channel.peer();
  try {
    accept_handshake(channel, options_.token, "tracker", [&admission] { admission.admit(); });
    channel.set_max_payload_bytes(0);  // nothing a tracker is sent carries a payload
    Frame first = channel.receive(kIdleClientTimeout);
    if (first.type == MessageType::kRegister) serve_server(channel, first);
    else serve_client(channel, std::move(first));
  } catch (const AuthenticationError& error) {
    log_(peer + " refused: " + error.what());
  } catch (const std::exception& error) {
    log_(peer + ": " + error.what());
  }
}

void Tracker::serve_server(Channel& channel, const Frame& registration) {
  Server server;
  const auto& m = registration.metadata;
  try {
    server.key = m.at("key").get<std::string>();
    server.host = m.at("host").get<std::string>();
    server.port = m.at("port").get<unsigned short>();
    server.via_proxy = m.value("via_proxy", false);
    server.device = m.at("device");
    const nlohmann::json devices = m.value("devices", nlohmann::json::array({server.device}));
    if (!devices.is_array()) throw std::invalid_argument("devices: expected an array");
    server.devices = nlohmann::json::array();
    for (const auto& fingerprint : devices) {
      auto device = kernels::DeviceInfo::from_fingerprint(fingerprint);
      server.devices.push_back({{"kind", device.kind}, {"name", device.name}, {"platform", device.platform}});
    }
  } catch (const std::exception& error) {
    channel.send_error(std::string("malformed registration: ") + error.what());
    return;
  }
  std::int64_t id;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
    servers_[id] = server;
  }
  changed_.notify_all();
  log_("server " + std::to_string(id) + " (" + server.key + " at " + server.host + ":" + std::to_string(server.port) +
       ") joined");
  try {
    channel.send({MessageType::kHeartbeat, {{"id", id}}, {}}, kReplyTimeout);
    for (;;) {
      expect(channel, MessageType::kHeartbeat, Seconds(options_.heartbeat_timeout_seconds));
      channel.send({MessageType::kHeartbeat, {}, {}}, kReplyTimeout);
    }
  } catch (const std::exception& error) {
    log_("server " + std::to_string(id) + " left the pool: " + error.what());
  }
  std::lock_guard lock(mutex_);
  servers_.erase(id);  // its lease, if any, stays until its client gives it back
}

void Tracker::serve_client(Channel& channel, Frame frame) {
  const std::string client = channel.peer();
  std::vector<std::int64_t> held;
  try {
    for (;;) {
      switch (frame.type) {
        case MessageType::kRequestLease:
          channel.send({MessageType::kLease, lease(frame.metadata, client, held), {}}, kReplyTimeout);
          break;
        case MessageType::kRelease:
          for (const auto& id : frame.metadata.value("leases", std::vector<std::int64_t>{})) {
            if (std::find(held.begin(), held.end(), id) == held.end()) continue;  // only one's own
            release(id);
            std::erase(held, id);
          }
          break;
        case MessageType::kStatus:
          channel.send({MessageType::kStatusReply, status(), {}}, kReplyTimeout);
          break;
        default:
          channel.send_error("a tracker does not take " + std::string(message_type_name(frame.type)) + " messages");
          throw TransportError("unexpected " + std::string(message_type_name(frame.type)));
      }
      frame = channel.receive(kIdleClientTimeout);
    }
  } catch (const std::exception&) {
    // The client went away: its leases end with its connection.
  }
  for (auto id : held) release(id);
}

nlohmann::json Tracker::lease(const nlohmann::json& request, const std::string& client,
                              std::vector<std::int64_t>& held) {
  const std::string key = request.value("key", std::string());
  const std::size_t max_count = std::max<std::size_t>(1, request.value("max_count", std::size_t{1}));
  const double wait = std::clamp(request.value("wait_seconds", 0.0), 0.0, 24 * 3600.0);
  std::unique_lock lock(mutex_);
  const std::int64_t ticket = next_id_++;
  queue_.push_back({ticket, key, client, unix_now()});
  auto first_of_key = [&] {
    return std::find_if(queue_.begin(), queue_.end(), [&](const Waiting& w) { return w.key == key; })->ticket == ticket;
  };
  auto free_server = [&] {
    return std::any_of(servers_.begin(), servers_.end(),
                       [&](const auto& s) { return s.second.key == key && s.second.lease == 0; });
  };
  changed_.wait_for(lock, std::chrono::duration<double>(wait), [&] { return first_of_key() && free_server(); });
  // The server the client prefers first, where free (the device a comparison's first round ran
  // on), then the others in order.
  const std::string prefer_host = request.value("prefer_host", std::string());
  const auto prefer_port = request.value("prefer_port", std::uint32_t{0});
  std::vector<std::int64_t> order;
  for (const auto& [id, server] : servers_) {
    const bool preferred = server.host == prefer_host && server.port == prefer_port;
    order.insert(preferred ? order.begin() : order.end(), id);
  }
  nlohmann::json leased = nlohmann::json::array();
  for (std::int64_t id : order) {
    Server& server = servers_.at(id);
    if (leased.size() == max_count) break;
    if (server.key != key || server.lease != 0 || !first_of_key()) continue;
    const std::int64_t lease_id = next_id_++;
    server.lease = lease_id;
    leases_[lease_id] = {id, client};
    held.push_back(lease_id);
    leased.push_back({{"lease", lease_id}, {"key", key}, {"host", server.host}, {"port", server.port},
                      {"via_proxy", server.via_proxy}, {"device", server.device}});
  }
  std::erase_if(queue_, [&](const Waiting& w) { return w.ticket == ticket; });
  lock.unlock();
  changed_.notify_all();  // the next in the queue may now be first
  return {{"leases", leased}};
}

void Tracker::release(std::int64_t lease_id) {
  {
    std::lock_guard lock(mutex_);
    auto lease = leases_.find(lease_id);
    if (lease == leases_.end()) return;
    auto server = servers_.find(lease->second.server);
    if (server != servers_.end() && server->second.lease == lease_id) server->second.lease = 0;
    leases_.erase(lease);
  }
  changed_.notify_all();
}

nlohmann::json Tracker::status() {
  std::lock_guard lock(mutex_);
  nlohmann::json servers = nlohmann::json::array(), leases = nlohmann::json::array(), queue = nlohmann::json::array();
  for (const auto& [id, s] : servers_)
    servers.push_back({{"id", id}, {"key", s.key}, {"address", s.host + ":" + std::to_string(s.port)},
                       {"via_proxy", s.via_proxy}, {"leased", s.lease != 0},
                       {"device", s.device.value("name", std::string())}, {"devices", s.devices}});
  for (const auto& [id, l] : leases_) leases.push_back({{"lease", id}, {"server", l.server}, {"client", l.client}});
  const double now = unix_now();
  for (const auto& w : queue_) queue.push_back({{"key", w.key}, {"client", w.client}, {"waiting_seconds", now - w.since}});
  return {{"servers", servers}, {"leases", leases}, {"queue", queue}};
}

TrackerClient::TrackerClient(const Endpoint& tracker, const Token& token, double timeout_seconds)
    : endpoint_(tracker), channel_(Channel::connect(tracker, Seconds(timeout_seconds))), timeout_seconds_(timeout_seconds) {
  connect_handshake(channel_, token, {{"role", "client"}});
  channel_.set_max_payload_bytes(0);
}

std::vector<LeasedServer> TrackerClient::request_lease(const std::string& key, std::size_t max_count,
                                                       double wait_seconds, const std::optional<Endpoint>& prefer) {
  nlohmann::json request = {{"key", key}, {"max_count", max_count}, {"wait_seconds", wait_seconds}};
  if (prefer) {
    request["prefer_host"] = prefer->host;
    request["prefer_port"] = prefer->port;
  }
  channel_.send({MessageType::kRequestLease, std::move(request), {}}, Seconds(timeout_seconds_));
  Frame reply = expect(channel_, MessageType::kLease, Seconds(wait_seconds + timeout_seconds_));
  std::vector<LeasedServer> leases;
  try {
    for (const auto& l : reply.metadata.at("leases"))
      leases.push_back({l.at("lease").get<std::int64_t>(), l.at("key").get<std::string>(),
                        {l.at("host").get<std::string>(), l.at("port").get<unsigned short>()},
                        l.value("via_proxy", false), l.at("device")});
  } catch (const std::exception& error) {
    throw TransportError(std::string("malformed lease from the tracker: ") + error.what());
  }
  return leases;
}

void TrackerClient::release(const std::vector<LeasedServer>& leases) {
  nlohmann::json ids = nlohmann::json::array();
  for (const auto& l : leases) ids.push_back(l.lease);
  channel_.send({MessageType::kRelease, {{"leases", ids}}, {}}, Seconds(timeout_seconds_));
}

nlohmann::json TrackerClient::status() {
  channel_.send({MessageType::kStatus, {}, {}}, Seconds(timeout_seconds_));
  return expect(channel_, MessageType::kStatusReply, Seconds(timeout_seconds_)).metadata;
}

}  // namespace optune::measure::rpc
