#include "optune/measure/rpc/rpc_server.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <set>
#include <thread>

#include "optune/kernels/target.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/measure/kernel_operands.hpp"

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

// A received artifact on disk for as long as it is measured: removed however the measurement
// ends (a reply, a worker that cannot start, a failed write, an exception of any kind).
struct ArtifactFile {
  fs::path path;
  ArtifactFile(fs::path where, const std::string& bytes) : path(std::move(where)) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      remove();
      throw std::runtime_error("cannot write " + path.string());
    }
  }
  ArtifactFile(const ArtifactFile&) = delete;
  ArtifactFile& operator=(const ArtifactFile&) = delete;
  ~ArtifactFile() { remove(); }
  void remove() noexcept {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
};

// A number of the request's timing, as the worker reads it: the ranges of the command line's
// options, integers where the worker takes an int.
std::string timing_problem(const nlohmann::json& timing) {
  if (!timing.is_object()) return "timing: expected an object";
  struct Field {
    const char* name;
    double min, max;
    bool integer;
  };
  static const Field kFields[] = {{"warmup", 0, 1000, true},           {"number", 0, 1e6, true},
                                  {"repeat", 1, 1000, true},           {"min_repeat_ms", 0, 60000, false},
                                  {"comparison_min_repeat_ms", 0, 60000, false},
                                  {"timeout_seconds", 0.1, 86400, false}, {"max_relative_error", 0, 1, false},
                                  {"bail_out", 0, 1000, false}};
  for (const Field& field : kFields) {
    auto value = timing.find(field.name);
    if (value == timing.end()) continue;
    const bool typed = field.integer ? value->is_number_integer() : value->is_number();
    if (!typed || !(value->get<double>() >= field.min && value->get<double>() <= field.max))
      return std::string("timing.") + field.name + ": expected " + (field.integer ? "an integer" : "a number") +
             " from " + nlohmann::json(field.min).dump() + " to " + nlohmann::json(field.max).dump();
  }
  return "";
}

std::string make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "optune-rpc-server-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a work directory in " + fs::temp_directory_path().string());
  return pattern;
}

}  // namespace

std::string measure_request_problem(const nlohmann::json& metadata) {
  const auto request = metadata.find("request");
  if (request == metadata.end() || !request->is_object()) return "no request object";
  const auto workload = request->find("workload");
  if (workload == request->end() || !workload->is_string()) return "workload: expected a workload key";
  try {
    kernels::parse_workload_key(workload->get<std::string>());
  } catch (const std::invalid_argument& error) {
    return std::string("workload: ") + error.what();
  }
  const auto timing = request->find("timing");
  if (timing == request->end()) return "no timing object";
  if (std::string problem = timing_problem(*timing); !problem.empty()) return problem;
  if (auto seed = request->find("seed"); seed != request->end() && !seed->is_number_unsigned())
    return "seed: expected an unsigned integer";
  if (request->contains("describe")) return "describe: ask with a describe message";
  static const std::set<std::string> kFields = {"workload",     "timing",       "seed",          "target", "cache_dir",
                                                "kernel",       "input_dtypes", "best_seconds", "run_time_knobs"};
  for (const auto& [field, value] : request->items())
    if (!kFields.count(field)) return field + ": not a field of a measure request";
  if (auto target = request->find("target"); target != request->end()) {
    if (!target->is_string()) return "target: expected text";
    try {
      kernels::split_target(target->get<std::string>());
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
  }
  if (auto cache = request->find("cache_dir"); cache != request->end() && !cache->is_string())
    return "cache_dir: expected text";
  if (auto best = request->find("best_seconds");
      best != request->end() && !(best->is_number() && best->get<double>() > 0 && std::isfinite(best->get<double>())))
    return "best_seconds: expected a positive number";
  if (auto knobs = request->find("run_time_knobs"); knobs != request->end()) {
    if (!knobs->is_array() || knobs->size() > 64) return "run_time_knobs: expected a list of at most 64 integers";
    for (const auto& value : *knobs)
      if (!value.is_number_integer()) return "run_time_knobs: expected a list of at most 64 integers";
  }
  if (auto dtypes = request->find("input_dtypes"); dtypes != request->end()) {
    if (!dtypes->is_array() || dtypes->size() > 8) return "input_dtypes: expected a list of dtypes";
    for (const auto& name : *dtypes) {
      if (!name.is_string()) return "input_dtypes: expected a list of dtypes";
      try {
        kernels::parse_data_type(name.get<std::string>());
      } catch (const std::invalid_argument& error) {
        return std::string("input_dtypes: ") + error.what();
      }
    }
  }
  if (auto kernel = request->find("kernel"); kernel != request->end()) {
    KernelOperandsSpec spec;
    try {
      spec = kernel->get<KernelOperandsSpec>();
    } catch (const std::exception& error) {
      return std::string("kernel: ") + error.what();
    }
    // Files name paths of the client's machine, not of this one.
    if (!spec.check.expected_files.empty()) return "kernel: check.expected files are not sent over RPC (check with a reference)";
    for (const auto& arg : spec.args)
      if (!arg.data_file.empty()) return "kernel: args." + arg.name + ".data files are not sent over RPC";
  }
  return "";
}

namespace {

// The server's worker: the artifacts it measures are uploads, which ArtifactFile removes.
LocalRunnerOptions local_runner_options(const RpcServerOptions& server) {
  LocalRunnerOptions options;
  options.worker_path = server.worker_path;
  options.remove_artifacts = false;
  options.launcher = server.worker_launcher;
  return options;
}

}  // namespace

RpcServer::RpcServer(RpcServerOptions options, LogFunction log)
    : options_(std::move(options)),
      log_(std::move(log)),
      slots_(options_.max_sessions),
      runner_(local_runner_options(options_)) {}

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
  program_cache_dir_ = options_.program_cache_dir.empty() ? (fs::path(work_dir_) / "program-cache").string()
                                                        : fs::absolute(options_.program_cache_dir).string();
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
  listener_.accept_forever([this](Channel channel, Admission& admission) { session(std::move(channel), &admission); },
                           log_, slots_, "server");
}

void RpcServer::session(Channel channel, Admission* admission) {
  const std::string peer = channel.peer();
  channel.set_stall_timeout(Seconds(options_.frame_stall_seconds));
  try {
    // Through a proxy (no admission) the slot is taken before the connection is offered.
    const std::function<void()> admit = admission ? std::function<void()>([admission] { admission->admit(); })
                                                  : std::function<void()>();
    accept_handshake(channel, options_.token, "server", admit,
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
  if (std::string problem = measure_request_problem(frame.metadata); !problem.empty()) {
    log_("refused a measure request: " + problem);
    return {MessageType::kResult,
            {{"reply", {{"status", "runtime_error"}, {"message", "bad measure request: " + problem}}}},
            {}};
  }
  // Paths in a request are the server's to choose: the artifact's (set by measure_request) and the
  // program cache's (programs are compiled here, for this machine's devices and drivers).
  WorkerRequest request;
  try {
    request = frame.metadata["request"].get<WorkerRequest>();
  } catch (const std::exception& error) {
    return {MessageType::kResult, {{"reply", failure_reply("runtime_error", std::string("bad measure request: ") + error.what())}}, {}};
  }
  request.cache_dir = program_cache_dir_;
  WorkerReply reply;
  {
    // Written only once the worker is ours: however many sessions wait, one artifact is on disk.
    std::lock_guard lock(measure_mutex_);
    const ArtifactFile artifact(fs::path(work_dir_) / ("artifact-" + std::to_string(::getpid()) + "-" +
                                                       std::to_string(next_artifact_++) + safe_suffix(frame.metadata)),
                                frame.payload);
    reply = runner_.measure_request(request, artifact.path.string());
  }
  log_("measured " + std::to_string(frame.payload.size()) + " bytes: " + reply.status);
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
    // At the limit, no idle connection is offered: clients wait at the proxy for one to free.
    SessionSlots::Slot slot = slots_.take();
    try {
      Channel channel = Channel::connect(*options_.proxy, Seconds(10));
      connect_handshake(channel, options_.token, {{"role", "server"}});
      channel.send({MessageType::kProxyRegister, {{"key", options_.key}}, {}}, Seconds(10));
      // Idle until the proxy joins a client to this connection; then the usual session runs on
      // it while the next idle connection is opened.
      expect(channel, MessageType::kProxyStart, Seconds(options_.idle_session_seconds));
      std::thread([this, channel = std::move(channel), slot = std::move(slot)]() mutable {
        session(std::move(channel), nullptr);
      }).detach();
      continue;
    } catch (const std::exception& error) {
      log_("proxy " + options_.proxy->str() + ": " + error.what());
    }
    std::this_thread::sleep_for(Seconds(options_.reconnect_seconds));
  }
}

}  // namespace optune::measure::rpc
