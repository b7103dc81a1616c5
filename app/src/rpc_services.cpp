#include "optune/app/rpc_services.hpp"

#include <csignal>
#include <filesystem>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "optune/app/bad_input.hpp"
#include "optune/app/remote.hpp"

namespace optune::app {
namespace {

namespace rpc = measure::rpc;

std::optional<rpc::Endpoint> endpoint_option(const std::string& name, const std::string& text) {
  if (text.empty()) return std::nullopt;
  try {
    return rpc::parse_endpoint(text);
  } catch (const std::invalid_argument& error) {
    throw BadInput(name + ": " + error.what());
  }
}

// Binding failures (port in use, address not here) are the user's to fix: bad input.
template <class Listener>
unsigned short start_listening(Listener& listener, const std::string& what, const std::string& host) {
  try {
    return listener.start();
  } catch (const std::system_error& error) {
    throw BadInput(what + ": cannot listen on " + host + ": " + error.what());
  }
}

// The tracker and the proxy start alike: token, then listening, then serving until killed.
template <typename Service, typename Options>
void serve_until_killed(Options options, const std::string& token_file, const std::string& what,
                        const ListenerOutput& output) {
  options.token = load_token(token_file);
  require_token_beyond_loopback(what, options.host, options.token);
  std::signal(SIGPIPE, SIG_IGN);
  Service service(options, output.log);
  unsigned short port = start_listening(service, what, options.host);
  output.announce(fmt::format("optune {}: listening on {}:{}", what, options.host, port));
  service.serve();
}

}  // namespace

void serve_rpc_server(const RpcServerRequest& request, const InstallPaths& paths, const ListenerOutput& output) {
  auto options = request.options;
  options.tracker = endpoint_option("--tracker", request.tracker);
  options.proxy = endpoint_option("--proxy", request.proxy);
  options.token = load_token(request.token_file);
  if (!options.proxy) require_token_beyond_loopback("rpc server", options.host, options.token);
  options.worker_path = request.worker.empty() ? paths.worker : request.worker;
  if (request.worker.empty() && !std::filesystem::exists(options.worker_path))
    throw std::runtime_error("optune-worker not found: " + options.worker_path);
  std::istringstream words(request.launcher);
  for (std::string word; words >> word;) options.worker_launcher.push_back(word);
  options.max_artifact_bytes = static_cast<std::uint32_t>(request.max_artifact_mb * (1 << 20));
  // Device programs are compiled here, for this machine's devices: cached where local tuning caches them.
  if (options.program_cache_dir.empty()) options.program_cache_dir = paths.program_cache_dir;
  std::signal(SIGPIPE, SIG_IGN);
  rpc::RpcServer server(options, output.log);
  unsigned short port = start_listening(server, "rpc server", options.host);
  const auto& device = server.device();
  std::string where = options.proxy ? "serving through proxy " + options.proxy->str()
                                    : fmt::format("listening on {}:{}", options.host, port);
  // The other devices first (the first is the server's own): the last line says the server is ready.
  for (std::size_t i = 1; i < server.devices().size(); ++i) {
    const auto& other = server.devices()[i];
    output.announce(fmt::format("optune rpc server: {} device {} / {} ({})", other.kind, other.platform, other.name,
                                other.fingerprint_id()));
  }
  output.announce(fmt::format("optune rpc server: key {}, device {} ({}, {}), {}", options.key, device.name,
                              device.arch, device.fingerprint_id(), where));
  server.serve();
}

void serve_tracker(rpc::TrackerOptions options, const std::string& token_file, const ListenerOutput& output) {
  serve_until_killed<rpc::Tracker>(std::move(options), token_file, "rpc tracker", output);
}

void serve_proxy(rpc::ProxyOptions options, const std::string& token_file, const ListenerOutput& output) {
  serve_until_killed<rpc::Proxy>(std::move(options), token_file, "rpc proxy", output);
}

nlohmann::json tracker_status(const std::string& tracker_text, const std::string& token_file) {
  auto tracker = endpoint_option("--tracker", tracker_text);
  try {
    return rpc::TrackerClient(*tracker, load_token(token_file)).status();
  } catch (const rpc::AuthenticationError& error) {  // the token given: bad input
    throw BadInput("tracker " + tracker->str() + ": " + error.what());
  } catch (const rpc::TransportError& error) {  // unreachable, busy or gone: exit 1, try again later
    throw std::runtime_error("tracker " + tracker->str() + ": " + error.what());
  }
}

}  // namespace optune::app
