#include "optune/measure/rpc/rpc_server.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace optune::measure::rpc {
namespace fs = std::filesystem;
namespace {

using Seconds = Channel::Seconds;
constexpr Seconds kSendTimeout{60};
// Descriptions kept per target text; a client cannot grow the map past this.
constexpr std::size_t kMaxCachedDescriptions = 64;

// The artifact's suffix matters to the worker (".so", ".json"), its name and directories do not:
// only a short [a-z0-9] extension is kept, so no client text ever reaches a path.
std::string safe_suffix(const nlohmann::json& metadata) {
  std::string suffix = metadata.value("artifact_suffix", std::string());
  if (suffix.size() < 2 || suffix.size() > 9 || suffix[0] != '.') return "";
  for (std::size_t i = 1; i < suffix.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(suffix[i]))) return "";
  return suffix;
}

std::string make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "optune-rpc-server-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a work directory in " + fs::temp_directory_path().string());
  return pattern;
}

}  // namespace

RpcServer::RpcServer(RpcServerOptions options, LogFunction log)
    : options_(std::move(options)),
      log_(std::move(log)),
      runner_(LocalRunnerOptions{options_.worker_path, {}, false, "", options_.worker_launcher}) {}

RpcServer::~RpcServer() {
  std::error_code ignored;
  if (owns_work_dir_) fs::remove_all(work_dir_, ignored);
}

unsigned short RpcServer::start() {
  if (options_.work_dir.empty()) {
    work_dir_ = make_temp_dir();
    owns_work_dir_ = true;
  } else {
    work_dir_ = fs::absolute(options_.work_dir).string();
    fs::create_directories(work_dir_);
  }
  opencl_cache_dir_ = options_.opencl_cache_dir.empty() ? (fs::path(work_dir_) / "opencl-cache").string()
                                                        : fs::absolute(options_.opencl_cache_dir).string();
  devices_ = runner_.describe_devices();
  device_ = devices_.front();
  if (!options_.proxy) {
    bound_port_ = listener_.listen(options_.host, options_.port);
  }
  return bound_port_;
}

void RpcServer::serve() {
  if (options_.tracker) std::thread([this] { keep_registered(); }).detach();
  if (options_.proxy) {
    keep_proxy_connection();  // never returns
  }
  listener_.accept_forever([this](Channel channel) { session(std::move(channel)); }, log_);
}

void RpcServer::session(Channel channel) {
  const std::string peer = channel.peer();
  try {
    accept_handshake(channel, options_.token, "server",
                     {{"key", options_.key}, {"device", device_.fingerprint()}, {"devices", devices_json()}});
    log_("client " + peer + " connected");
    channel.set_max_payload_bytes(options_.max_artifact_bytes);
    for (;;) {
      Frame frame = channel.receive(Seconds(options_.idle_session_seconds));
      if (frame.type == MessageType::kMeasure) {
        channel.send(measure(frame), kSendTimeout);
      } else if (frame.type == MessageType::kDescribe) {
        channel.send(describe(frame), kSendTimeout);
      } else {
        channel.send_error("a server expects measure or describe messages, not " +
                           std::string(message_type_name(frame.type)));
        break;
      }
    }
  } catch (const AuthenticationError& error) {
    log_("client " + peer + " refused: " + error.what());
  } catch (const std::exception& error) {
    log_("client " + peer + " session ended: " + error.what());
  }
}

Frame RpcServer::measure(const Frame& frame) {
  if (!frame.metadata.contains("request") || !frame.metadata["request"].is_object())
    return {MessageType::kResult, {{"reply", {{"status", "runtime_error"}, {"message", "measure message without a request object"}}}}, {}};
  const fs::path artifact =
      fs::path(work_dir_) / ("artifact-" + std::to_string(::getpid()) + "-" + std::to_string(next_artifact_++) +
                             safe_suffix(frame.metadata));
  {
    std::ofstream out(artifact, std::ios::binary);
    out.write(frame.payload.data(), static_cast<std::streamsize>(frame.payload.size()));
    if (!out) throw std::runtime_error("cannot write " + artifact.string());
  }
  // Paths in a request are the server's to choose: the artifact's (set by measure_request) and the
  // OpenCL program cache's (programs are compiled here, for this machine's devices and drivers).
  nlohmann::json request = frame.metadata["request"];
  if (request.contains("cache_dir")) request["cache_dir"] = opencl_cache_dir_;
  nlohmann::json reply;
  {
    std::lock_guard lock(measure_mutex_);
    reply = runner_.measure_request(request, artifact.string());
  }
  std::error_code ignored;
  fs::remove(artifact, ignored);
  log_("measured " + std::to_string(frame.payload.size()) + " bytes: " + reply.value("status", std::string("?")));
  return {MessageType::kResult, {{"reply", reply}}, {}};
}

// The device a client's target is measured on here: {"device": fingerprint}, or {"error": message}
// naming the devices there are. Asked of the worker (an OpenCL device is what its loader finds,
// a CPU the one it runs on), once per target.
Frame RpcServer::describe(const Frame& frame) {
  const auto target = frame.metadata.find("target");
  if (target == frame.metadata.end() || !target->is_string())
    return {MessageType::kDescription, {{"error", "describe message without a target"}}, {}};
  const std::string text = target->get<std::string>();
  std::lock_guard lock(measure_mutex_);
  if (auto cached = descriptions_.find(text); cached != descriptions_.end())
    return {MessageType::kDescription, cached->second, {}};
  nlohmann::json description;
  try {
    description = {{"device", runner_.describe_device(text).fingerprint()}};
  } catch (const NoSuchDeviceError& error) {
    description = {{"error", error.what()}};
  } catch (const std::exception& error) {  // the worker failed: not kept, the next try may do better
    log_(std::string("describing ") + text + ": " + error.what());
    return {MessageType::kDescription, {{"error", error.what()}}, {}};
  }
  if (descriptions_.size() < kMaxCachedDescriptions) descriptions_[text] = description;
  return {MessageType::kDescription, description, {}};
}

nlohmann::json RpcServer::devices_json() const {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : devices_) devices.push_back(device.fingerprint());
  return devices;
}

void RpcServer::keep_registered() {
  const Seconds timeout(std::max(10.0, 3 * options_.heartbeat_seconds));
  for (;;) {
    try {
      Channel channel = Channel::connect(*options_.tracker, Seconds(10));
      connect_handshake(channel, options_.token, {{"role", "server"}});
      std::string host = options_.host;
      if (options_.proxy) host = options_.proxy->host;
      else if (host == "0.0.0.0" || host == "::") host = channel.local_host();
      unsigned short port = options_.proxy ? options_.proxy->port : bound_port_;
      channel.send({MessageType::kRegister,
                    {{"key", options_.key}, {"host", host}, {"port", port}, {"via_proxy", options_.proxy.has_value()},
                     {"device", device_.fingerprint()}, {"devices", devices_json()}},
                    {}},
                   timeout);
      expect(channel, MessageType::kHeartbeat, timeout);
      log_("registered at tracker " + options_.tracker->str() + " as " + options_.key);
      for (;;) {
        std::this_thread::sleep_for(Seconds(options_.heartbeat_seconds));
        channel.send({MessageType::kHeartbeat, {}, {}}, timeout);
        expect(channel, MessageType::kHeartbeat, timeout);
      }
    } catch (const std::exception& error) {
      log_("tracker " + options_.tracker->str() + ": " + error.what());
    }
    std::this_thread::sleep_for(Seconds(options_.reconnect_seconds));
  }
}

void RpcServer::keep_proxy_connection() {
  for (;;) {
    try {
      Channel channel = Channel::connect(*options_.proxy, Seconds(10));
      connect_handshake(channel, options_.token, {{"role", "server"}});
      channel.send({MessageType::kProxyRegister, {{"key", options_.key}}, {}}, Seconds(10));
      // Idle until the proxy joins a client to this connection; then the usual session runs on
      // it while the next idle connection is opened.
      expect(channel, MessageType::kProxyStart, Seconds(options_.idle_session_seconds));
      std::thread([this, channel = std::move(channel)]() mutable { session(std::move(channel)); }).detach();
      continue;
    } catch (const std::exception& error) {
      log_("proxy " + options_.proxy->str() + ": " + error.what());
    }
    std::this_thread::sleep_for(Seconds(options_.reconnect_seconds));
  }
}

}  // namespace optune::measure::rpc
