// optune rpc server | tracker | proxy | status: measuring on remote devices (DESIGN.md). Each
// listener prints one "listening on HOST:PORT" line on stdout once bound (port 0 picks a free
// one), logs to stderr, and runs until killed.
#include <array>
#include <cstdio>
#include <memory>
#include <mutex>

#include "cli_support.hpp"
#include "optune/app/rpc_services.hpp"

namespace optune::cli {
namespace {

namespace rpc = measure::rpc;

// A listener's lines: the ready lines on stdout (scripts wait for them), its log on stderr.
app::ListenerOutput listener_output(const std::string& who) {
  auto mutex = std::make_shared<std::mutex>();
  return {[](const std::string& line) {
            std::printf("%s\n", line.c_str());
            std::fflush(stdout);
          },
          [who, mutex](const std::string& line) {
            std::lock_guard lock(*mutex);
            std::fprintf(stderr, "%s: %s\n", who.c_str(), line.c_str());
            std::fflush(stderr);
          }};
}

int run_server(const app::RpcServerRequest& request) {
  app::serve_rpc_server(request, install_paths(), listener_output("optune rpc server"));
  return 0;
}

int run_tracker(rpc::TrackerOptions options, const std::string& token_file) {
  app::serve_tracker(std::move(options), token_file, listener_output("optune rpc tracker"));
  return 0;
}

int run_proxy(rpc::ProxyOptions options, const std::string& token_file) {
  app::serve_proxy(std::move(options), token_file, listener_output("optune rpc proxy"));
  return 0;
}

int run_status(const std::string& tracker, const std::string& token_file, const std::string& format) {
  const nlohmann::json status = app::tracker_status(tracker, token_file);
  if (format == "json") {
    std::printf("%s\n", status.dump(2).c_str());
    return 0;
  }
  std::printf("servers (%zu)\n", status["servers"].size());
  for (const auto& s : status["servers"]) {
    std::printf("  %-4lld %-12s %-22s %-7s %s%s\n", s["id"].get<long long>(), s["key"].get<std::string>().c_str(),
                s["address"].get<std::string>().c_str(), s["leased"].get<bool>() ? "leased" : "free",
                s["device"].get<std::string>().c_str(), s["via_proxy"].get<bool>() ? " (via proxy)" : "");
    const auto devices = s.value("devices", nlohmann::json::array());
    for (std::size_t i = 1; i < devices.size(); ++i)
      std::printf("       %s %s / %s\n", devices[i].value("kind", "").c_str(), devices[i].value("platform", "").c_str(),
                  devices[i].value("name", "").c_str());
  }
  std::printf("leases (%zu)\n", status["leases"].size());
  for (const auto& l : status["leases"])
    std::printf("  %-4lld server %-4lld client %s\n", l["lease"].get<long long>(), l["server"].get<long long>(),
                l["client"].get<std::string>().c_str());
  std::printf("queue (%zu)\n", status["queue"].size());
  for (const auto& q : status["queue"])
    std::printf("  %-12s client %s waiting %.1f s\n", q["key"].get<std::string>().c_str(),
                q["client"].get<std::string>().c_str(), q["waiting_seconds"].get<double>());
  return 0;
}

}  // namespace

void add_rpc_commands(CLI::App& app, CommandAction& action) {
  CLI::App* rpc_app = app.add_subcommand("rpc", "Measure on remote devices: server, tracker, proxy, status");
  rpc_app->require_subcommand(1);
  const char* token_help = "File holding the shared token (required when listening beyond loopback)";

  auto server = std::make_shared<app::RpcServerRequest>();
  CLI::App* s = rpc_app->add_subcommand("server", "Run on the device: receive candidates, measure them, return results");
  s->add_option("--host", server->options.host, "Address to listen on")->capture_default_str();
  s->add_option("--port", server->options.port, "Port to listen on (0: any free one)")
      ->capture_default_str()->check(whole_number(0, 65535));
  s->add_option("--key", server->options.key, "The kind of device, as clients ask the tracker for it")->capture_default_str();
  s->add_option("--tracker", server->tracker, "Register at this tracker (HOST:PORT)");
  s->add_option("--proxy", server->proxy, "Serve through this proxy (HOST:PORT) instead of listening");
  s->add_option("--token-file", server->token_file, token_help);
  s->add_option("--workdir", server->options.work_dir, "Where received artifacts live while measured (default: a temp dir)");
  s->add_option("--program-cache,--opencl-cache", server->options.program_cache_dir,
                "Where compiled device programs are cached (default: a folder in the server's work directory)");
  s->add_option("--worker", server->worker, "The optune-worker to measure with (default: the one beside optune)");
  s->add_option("--worker-launcher", server->launcher,
                "Run the worker under this command, e.g. 'qemu-aarch64 -L /usr/aarch64-linux-gnu'");
  s->add_option("--max-artifact-mb", server->max_artifact_mb, "Largest artifact accepted, in MiB")
      ->capture_default_str()->check(finite_number(0.001, 4000.0));
  s->add_option("--heartbeat", server->options.heartbeat_seconds, "Seconds between heartbeats to the tracker")
      ->capture_default_str()->check(finite_number(0.05, 3600.0));
  s->add_option("--max-sessions", server->options.max_sessions,
                "Clients served at once (each may hold an artifact in memory); one more is told the server is busy")
      ->capture_default_str()->check(whole_number(1, 100000));
  s->callback([server, &action] { action = [server] { return run_server(*server); }; });

  auto tracker = std::make_shared<rpc::TrackerOptions>();
  auto tracker_token = std::make_shared<std::string>();
  CLI::App* t = rpc_app->add_subcommand("tracker", "Hand out devices by key: registration, leases, queue");
  t->add_option("--host", tracker->host, "Address to listen on")->capture_default_str();
  t->add_option("--port", tracker->port, "Port to listen on (0: any free one)")
      ->capture_default_str()->check(whole_number(0, 65535));
  t->add_option("--token-file", *tracker_token, token_help);
  t->add_option("--heartbeat-timeout", tracker->heartbeat_timeout_seconds,
                "Seconds of silence after which a server leaves the pool")
      ->capture_default_str()->check(finite_number(0.1, 3600.0));
  t->add_option("--max-sessions", tracker->max_sessions,
                "Connections handled at once (each registered server holds one); one more is told the tracker is busy")
      ->capture_default_str()->check(whole_number(1, 100000));
  t->callback([tracker, tracker_token, &action] {
    action = [tracker, tracker_token] { return run_tracker(*tracker, *tracker_token); };
  });

  auto proxy = std::make_shared<rpc::ProxyOptions>();
  auto proxy_token = std::make_shared<std::string>();
  CLI::App* p = rpc_app->add_subcommand("proxy", "Join clients to servers that connect out to it (devices behind NAT)");
  p->add_option("--host", proxy->host, "Address to listen on")->capture_default_str();
  p->add_option("--port", proxy->port, "Port to listen on (0: any free one)")
      ->capture_default_str()->check(whole_number(0, 65535));
  p->add_option("--token-file", *proxy_token, token_help);
  p->add_option("--max-sessions", proxy->max_sessions, "Connections handled at once; one more is told the proxy is busy")
      ->capture_default_str()->check(whole_number(1, 100000));
  p->callback([proxy, proxy_token, &action] {
    action = [proxy, proxy_token] { return run_proxy(*proxy, *proxy_token); };
  });

  auto status = std::make_shared<std::array<std::string, 3>>(std::array<std::string, 3>{"", "", "table"});
  CLI::App* st = rpc_app->add_subcommand("status", "Show a tracker's pool, leases and queue");
  st->add_option("--tracker", (*status)[0], "The tracker (HOST:PORT)")->required();
  st->add_option("--token-file", (*status)[1], "File holding the shared token");
  st->add_option("--format", (*status)[2], "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  st->callback([status, &action] {
    action = [status] { return run_status((*status)[0], (*status)[1], (*status)[2]); };
  });
}

}  // namespace optune::cli
