// bench_rpc_overhead: what measuring over RPC costs against measuring locally, on the same built
// candidates, on this machine (loopback: a tracker and a server started as `optune rpc`
// processes). Reports per-candidate wall time (median over rounds) of LocalRunner and RpcRunner,
// their ratio, and how far the remote timings of the kernels are from the local ones. With an
// OpenCL target the candidates are OpenCL artifacts, compiled by each side into its own program
// cache (the first round compiles, later ones load: the median is of cached rounds from 3 on).
//
//   build/tests/bench/bench_rpc_overhead build/bin/optune build/bin/optune-worker [candidates] [M,N,K] [rounds] [target]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/measure/local_runner.hpp"
#include "optune/measure/rpc/rpc_runner.hpp"
#include "optune/measure/subprocess.hpp"

namespace {

using namespace optune;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

unsigned short start_listening(measure::Subprocess& process, const fs::path& log) {
  static const std::regex listening("listening on [^ ]+:([0-9]+)");
  for (auto deadline = Clock::now() + std::chrono::seconds(60); Clock::now() < deadline;) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    std::smatch match;
    std::string s = text.str();
    if (std::regex_search(s, match, listening)) return static_cast<unsigned short>(std::stoi(match[1]));
    if (process.poll()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error("did not start: see " + log.string());
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OPTUNE OPTUNE_WORKER [candidates=12] [shape=256,256,256] [rounds=3] [target=cpu]\n",
                 argv[0]);
    return 2;
  }
  const std::string optune = argv[1], worker = argv[2];
  const int count = argc > 3 ? std::atoi(argv[3]) : 12;
  const std::string shape = argc > 4 ? argv[4] : "256,256,256";
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 3;
  const std::string target = argc > 6 ? argv[6] : "cpu";

  auto task = std::make_shared<measure::MeasureTask>();
  task->workload = kernels::parse_workload(kernels::Op::kGemm, shape);
  task->target = backends::parse_target(target);
  task->kernel_template = &backends::find_template("gemm." + task->target.backend);
  task->device = backends::find_device(task->target);
  task->space = task->kernel_template->space(task->workload, task->device);
  std::mt19937_64 rng(7);
  std::vector<measure::MeasureInput> inputs;
  inputs.push_back({task, task->kernel_template->default_config(task->workload, task->device, task->space)});
  while (static_cast<int>(inputs.size()) < count) inputs.push_back({task, task->space.sample_valid(rng)});

  fs::path dir = fs::temp_directory_path() / ("optune-bench-rpc-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  measure::BuildSettings build_settings;
  build_settings.kernel_source_dirs = {{"cpu", OPTUNE_SOURCE_DIR "/backends/cpu/include"},
                                       {"opencl", OPTUNE_SOURCE_DIR "/backends/opencl/kernels"}};
  auto builder = backends::find_backend(task->target.backend).make_builder(task->target, build_settings);
  const std::vector<measure::BuildResult> builds = builder->build(inputs);

  auto tracker = measure::Subprocess::spawn({optune, "rpc", "tracker", "--port", "0"}, {false, (dir / "tracker.log").string()});
  unsigned short tracker_port = start_listening(tracker, dir / "tracker.log");
  auto server = measure::Subprocess::spawn({optune, "rpc", "server", "--port", "0", "--key", "bench", "--tracker",
                                            "127.0.0.1:" + std::to_string(tracker_port), "--worker", worker,
                                            "--opencl-cache", (dir / "server-cache").string()},
                                           {false, (dir / "server.log").string()});
  start_listening(server, dir / "server.log");

  measure::TimingPolicy timing;
  timing.repeat = 5;
  timing.min_repeat_ms = 20;
  measure::LocalRunner local({worker, timing, false, (dir / "local-cache").string()});
  measure::rpc::RpcRunnerOptions rpc_options;
  rpc_options.tracker = {"127.0.0.1", tracker_port};
  rpc_options.key = "bench";
  rpc_options.timing = timing;
  rpc_options.remove_artifacts = false;
  measure::rpc::RpcRunner remote(rpc_options);

  std::vector<double> local_wall, remote_wall;
  std::vector<std::vector<double>> local_cost(inputs.size()), remote_cost(inputs.size());
  for (int round = 0; round < rounds; ++round) {  // interleaved, so load changes hit both alike
    auto start = Clock::now();
    auto l = local.run(inputs, builds);
    local_wall.push_back(seconds_since(start) / inputs.size());
    start = Clock::now();
    auto r = remote.run(inputs, builds);
    remote_wall.push_back(seconds_since(start) / inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (l[i].ok()) local_cost[i].push_back(l[i].median_seconds);
      if (r[i].ok()) remote_cost[i].push_back(r[i].median_seconds);
    }
  }
  std::vector<double> cost_ratios;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!local_cost[i].empty() && !remote_cost[i].empty())
      cost_ratios.push_back(measure::median(remote_cost[i]) / measure::median(local_cost[i]));
  double lw = measure::median(local_wall), rw = measure::median(remote_wall);
  std::printf("%s: %s\n", task->target.str().c_str(), task->device.name.c_str());
  std::printf("gemm %s, %zu candidates (%zu built ok), %d rounds, timing: repeat %d, min_repeat_ms %.0f\n", shape.c_str(),
              inputs.size(), static_cast<std::size_t>(std::count_if(builds.begin(), builds.end(), [](auto& b) { return b.ok(); })),
              rounds, timing.repeat, timing.min_repeat_ms);
  std::printf("wall per candidate, median over rounds: local %.1f ms, rpc (loopback) %.1f ms, ratio %.3f\n", lw * 1e3,
              rw * 1e3, rw / lw);
  std::printf("kernel time remote/local, median over candidates: %.3f (min %.3f, max %.3f, %zu candidates)\n",
              measure::median(cost_ratios), *std::min_element(cost_ratios.begin(), cost_ratios.end()),
              *std::max_element(cost_ratios.begin(), cost_ratios.end()), cost_ratios.size());
  tracker.kill();
  server.kill();
  fs::remove_all(dir);
  return 0;
}
