// Remote measurement end to end: real `optune rpc` processes on real sockets (loopback, a proxy,
// two network namespaces, an aarch64 worker under qemu), real compiles, a real SQLite file.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "behaviour_template.hpp"
#include "optune/backends/registry.hpp"
#include "optune/db/database.hpp"
#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/backends/cpu/local_builder.hpp"
#include "optune/measure/rpc/rpc_runner.hpp"
#include "optune/measure/rpc/rpc_session.hpp"
#include "optune/measure/subprocess.hpp"
#include "rpc_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune;
using namespace optune::rpc_test;
using Clock = std::chrono::steady_clock;

// The candidates a server measured, as its log says ("measured N bytes: ok").
std::size_t measured_count(const fs::path& log_file) {
  const std::string log = slurp(log_file);
  std::size_t n = 0;
  for (std::size_t at = log.find("measured"); at != std::string::npos; at = log.find("measured", at + 1)) ++n;
  return n;
}

TEST_F(RpcTest, TuningOverRpcWritesTheSameKindOfRecordsAsLocalTuning) {
  auto& tracker = start_tracker();
  auto& server = start_server("server", "loop", tracker.port);
  CommandRun run = optune(std::string(kTinyTune) + " --trials 2 --batch-size 2 --remeasure 1 --db " + db() +
                          rpc("loop", tracker));
  ASSERT_EQ(run.code, 0) << run.out << run.err << slurp(server.log);
  EXPECT_TRUE(contains(run.out, "speed-up")) << run.out;
  auto remote = records();
  expect_the_records_of_a_tiny_run(remote);
  for (const auto& r : remote) {
    EXPECT_EQ(r.error_kind, "ok") << r.error_message;
    EXPECT_EQ(r.workload_key, "gemm.f32.M48.N40.K36");
    EXPECT_EQ(r.target, "cpu");
    EXPECT_EQ(r.device_id, device_id(server)) << "records carry the remote device's fingerprint";
    EXPECT_GT(r.gflops, 0);
  }
  EXPECT_TRUE(contains(slurp(server.log), "measured")) << slurp(server.log);
  EXPECT_TRUE(fs::is_empty(dir_ / "server-work")) << "artifacts are removed after use";

  // The same tuning on this machine: the same fields filled the same way (same device here).
  fs::path local_db = dir_ / "local.db";
  CommandRun local = optune(std::string(kTinyTune) + " --trials 2 --batch-size 2 --remeasure 1 --target cpu --db " +
                            local_db.string());
  ASSERT_EQ(local.code, 0) << local.err;
  auto local_records = db::Database::open(local_db.string(), db::Database::Mode::kReadOnly).records({});
  ASSERT_GE(local_records.size(), 1u + 2u + 2u);
  EXPECT_EQ(local_records[0].device_id, remote[0].device_id);
  EXPECT_EQ(local_records[0].template_name, remote[0].template_name);

  CommandRun status = optune("rpc status --tracker 127.0.0.1:" + std::to_string(tracker.port));
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_TRUE(contains(status.out, "servers (1)")) << status.out;
  EXPECT_TRUE(contains(status.out, "loop")) << status.out;
  EXPECT_TRUE(contains(status.out, "free")) << status.out;
}

// A user's kernel file over RPC: the candidate's object (with its trampolines) and the kernel's
// operands travel, the server's worker checks against the reference; a kernel whose check reads
// files of this machine (expected, data) is refused by the server before anything runs.
TEST_F(RpcTest, KernelFilesAreTunedOverRpc) {
  auto& tracker = start_tracker();
  auto& server = start_server("server", "kern", tracker.port);
  const std::string kernels = std::string(OPTUNE_SOURCE_DIR) + "/tests/data/kernels/";
  CommandRun run = optune("tune --kernel " + kernels + "faulty_cpu.toml --tuner grid --trials 6 --timeout 3 "
                          "--remeasure 0 --repeat 2 --min-repeat-ms 1 --quiet --rpc-wait 20 --db " + db() +
                          rpc("kern", tracker));
  ASSERT_EQ(run.code, 0) << run.out << run.err << slurp(server.log);
  std::map<std::string, std::string> kinds;
  for (const auto& r : records()) {
    kinds[r.config.dump()] = r.error_kind;
    EXPECT_EQ(r.device_id, device_id(server)) << "records carry the remote device's fingerprint";
  }
  EXPECT_EQ(kinds["{\"MODE\":0}"], "ok");
  EXPECT_EQ(kinds["{\"MODE\":1}"], "wrong_answer");
  EXPECT_EQ(kinds["{\"MODE\":2}"], "timeout");
  EXPECT_EQ(kinds["{\"MODE\":3}"], "crash");
  EXPECT_EQ(kinds["{\"MODE\":4}"], "wrong_answer");

  // A check by expected files names files of this machine: the server refuses it, and says why.
  std::string text = slurp(kernels + "faulty_cpu.toml");
  text.replace(text.find("source = \"faulty_cpu.cpp\""), 25, "source = \"" + kernels + "faulty_cpu.cpp\"");
  text.replace(text.find("reference = \"faulty_reference\""), 30, "expected = \"y.bin\"");
  std::ofstream(dir_ / "expected.toml") << text;
  std::ofstream(dir_ / "y.bin", std::ios::binary) << std::string(4096 * 4, '\0');
  CommandRun refused = optune("tune --kernel " + (dir_ / "expected.toml").string() + " --trials 2 --remeasure 0 "
                              "--repeat 1 --min-repeat-ms 1 --quiet --rpc-wait 20 --db " + (dir_ / "refused.db").string() +
                              rpc("kern", tracker));
  EXPECT_NE(refused.code, 0) << refused.out << refused.err;
  EXPECT_TRUE(contains(refused.out + refused.err, "not sent over RPC")) << refused.out << refused.err;
}

TEST_F(RpcTest, TwoServersUnderOneKeyShareABatch) {
  auto& tracker = start_tracker();
  auto& first = start_server("first", "pair", tracker.port, {}, 0);
  auto& second = start_server("second", "pair", tracker.port, {}, 1);
  // Slow enough per candidate (about 0.3 s) that both devices take part in a 6-candidate batch.
  CommandRun run = optune("tune --op gemm --shape 48,40,36 --tuner random --repeat 3 --min-repeat-ms 100 --quiet "
                          "--trials 6 --batch-size 6 --remeasure 0 --rpc-wait 20 --db " + db() + rpc("pair", tracker));
  ASSERT_EQ(run.code, 0) << run.err;
  std::size_t on_first = measured_count(first.log), on_second = measured_count(second.log);
  EXPECT_GE(on_first, 1u) << slurp(first.log);
  EXPECT_GE(on_second, 1u) << slurp(second.log);
  EXPECT_EQ(on_first + on_second, 1u + 6u);  // the default config, then the batch
  for (const auto& r : records()) EXPECT_EQ(r.error_kind, "ok") << r.error_message;
}

TEST_F(RpcTest, ServerBehindAProxyIsReachedThroughIt) {
  auto& tracker = start_tracker();
  auto& proxy = start("proxy", {"rpc", "proxy", "--port", "0"});
  auto& server = start_server("server", "phone", tracker.port, {"--proxy", "127.0.0.1:" + std::to_string(proxy.port)});
  CommandRun run = optune(std::string(kTinyTune) + " --trials 3 --batch-size 3 --remeasure 0 --db " + db() +
                          rpc("phone", tracker));
  ASSERT_EQ(run.code, 0) << run.err << slurp(server.log) << slurp(proxy.log);
  ASSERT_EQ(records().size(), 1u + 3u);
  for (const auto& r : records()) EXPECT_EQ(r.error_kind, "ok") << r.error_message;
  EXPECT_TRUE(contains(slurp(proxy.log), "joined")) << slurp(proxy.log);
  EXPECT_TRUE(contains(slurp(server.log), "measured")) << slurp(server.log);
}

TEST_F(RpcTest, WrongTokenIsRefusedBeforeAnythingIsUploaded) {
  const std::string secret = "correct-horse-battery-staple";
  std::string good = write_file("good.token", secret + "\n"), bad = write_file("bad.token", "guess");
  auto& tracker = start_tracker({"--token-file", good});
  auto& server = start_server("server", "secure", tracker.port, {"--token-file", good});

  CommandRun refused = optune(std::string(kTinyTune) + " --trials 2 --db " + db() + " --token-file " + bad +
                              rpc("secure", tracker));
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_TRUE(contains(refused.err, "wrong token")) << refused.err;
  CommandRun missing = optune(std::string(kTinyTune) + " --trials 2 --db " + db() + rpc("secure", tracker));
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.err, "requires a token")) << missing.err;

  // Straight at the server, skipping the tracker: refused at the handshake, nothing received.
  measure::rpc::LeasedServer direct{0, "secure", {"127.0.0.1", server.port}, false, {}};
  EXPECT_THROW(measure::rpc::RpcSession::open(direct, {"guess"}, 5), measure::rpc::AuthenticationError);
  EXPECT_NO_THROW(measure::rpc::RpcSession::open(direct, {secret}, 5));
  EXPECT_FALSE(contains(slurp(server.log), "measured"));
  EXPECT_TRUE(fs::is_empty(dir_ / "server-work"));

  CommandRun accepted = optune(std::string(kTinyTune) + " --trials 2 --batch-size 2 --remeasure 0 --db " + db() +
                               " --token-file " + good + rpc("secure", tracker));
  ASSERT_EQ(accepted.code, 0) << accepted.err;
  EXPECT_EQ(records().size(), 3u);
  for (const auto& text : {slurp(server.log), slurp(tracker.log), refused.err, accepted.err, accepted.out})
    EXPECT_FALSE(contains(text, secret)) << "the token leaked: " << text;
  for (const auto& r : records()) EXPECT_FALSE(contains(r.error_message + r.device_fingerprint.dump(), secret));

  // Listening beyond loopback without a token is refused outright.
  CommandRun open = optune("rpc tracker --host 0.0.0.0 --port 0");
  EXPECT_EQ(open.code, 2);
  EXPECT_TRUE(contains(open.err, "token is required")) << open.err;
}

// Raw bytes at a server: each bad message ends that connection only.
TEST_F(RpcTest, MalformedTruncatedAndOversizedFramesLeaveTheServerServing) {
  auto& server = start_server("server", "k", 0, {"--max-artifact-mb", "1"});
  const measure::rpc::Endpoint endpoint{"127.0.0.1", server.port};
  using measure::rpc::Channel;
  const Channel::Seconds timeout(5);
  auto error_reply = [&](const std::string& bytes, bool handshake_first) {
    Channel channel = Channel::connect(endpoint, timeout);
    if (handshake_first) measure::rpc::connect_handshake(channel, {}, {{"role", "client"}});
    else channel.receive(timeout);  // the challenge
    asio::write(channel.socket(), asio::buffer(bytes));
    try {
      for (;;) {
        auto frame = channel.receive(timeout);
        if (frame.type == measure::rpc::MessageType::kError) return frame.metadata.value("message", std::string());
      }
    } catch (const measure::rpc::TransportError& error) {
      return std::string("closed: ") + error.what();
    }
  };
  EXPECT_TRUE(contains(error_reply("GET / HTTP/1.1\r\nHost: x\r\n\r\n", false), "magic"));
  std::string other_version = measure::rpc::encode_frame_head({measure::rpc::MessageType::kAuthenticate, {}, {}});
  other_version[5] = 9;
  std::string reply = error_reply(other_version, false);
  EXPECT_TRUE(contains(reply, "version 9") && contains(reply, "version " + std::to_string(measure::rpc::kProtocolVersion)))
      << reply;
  std::string oversized = measure::rpc::encode_frame_head({measure::rpc::MessageType::kMeasure, {{"request", {}}}, {}});
  oversized[12] = 0x10;  // 256 MiB announced, 1 MiB allowed
  EXPECT_TRUE(contains(error_reply(oversized, true), "over the limit"));
  {  // a truncated frame, then the client vanishes
    Channel channel = Channel::connect(endpoint, timeout);
    measure::rpc::connect_handshake(channel, {}, {{"role", "client"}});
    std::string head = measure::rpc::encode_frame_head({measure::rpc::MessageType::kMeasure, {{"request", {}}}, std::string(1000, 'x')});
    asio::write(channel.socket(), asio::buffer(head + "only a little"));
  }
  // Still serving: a well-formed measure of an artifact that is not a shared object comes back
  // as that candidate's runtime error, and its file is gone afterwards.
  auto session = measure::rpc::RpcSession::open({0, "k", endpoint, false, {}}, {}, 5);
  EXPECT_EQ(session.device().fingerprint_id(), device_id(server));
  std::string artifact = write_file("candidate.so", "not an ELF file");
  nlohmann::json request = {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"repeat", 1}}}};
  auto worker_reply = session.measure(artifact, request.get<measure::WorkerRequest>(), 60);
  EXPECT_EQ(worker_reply.status, "runtime_error") << worker_reply.message;
  EXPECT_TRUE(contains(worker_reply.message, "dlopen")) << worker_reply.message;
  EXPECT_TRUE(fs::is_empty(dir_ / "server-work"));
  {  // a client naming a path outside the work directory: the server picks its own names
    Channel channel = Channel::connect(endpoint, timeout);
    measure::rpc::connect_handshake(channel, {}, {{"role", "client"}});
    const fs::path escaped = dir_ / "escaped";
    channel.send({measure::rpc::MessageType::kMeasure,
                  {{"request", request}, {"artifact_suffix", "/../../" + escaped.string()}, {"artifact", escaped.string()}},
                  "payload"},
                 timeout);
    auto result = measure::rpc::expect(channel, measure::rpc::MessageType::kResult, Channel::Seconds(60));
    EXPECT_EQ(result.metadata["reply"].value("status", ""), "runtime_error") << result.metadata;
    EXPECT_FALSE(fs::exists(escaped));
    EXPECT_TRUE(fs::is_empty(dir_ / "server-work"));
  }
  EXPECT_FALSE(server.process.poll()) << slurp(server.log);
}

TEST_F(RpcTest, ServerKilledMidBatchLeavesMarkedRecordsAndAnIntactDatabase) {
  auto& tracker = start_tracker();
  auto& doomed = start_server("doomed", "fleet", tracker.port, {}, 0);
  auto& survivor = start_server("survivor", "fleet", tracker.port, {}, 1);
  auto tuning = std::async(std::launch::async, [&] {
    return optune("tune --op gemm --shape 48,40,36 --tuner random --repeat 3 --min-repeat-ms 150 --quiet "
                  "--trials 8 --batch-size 8 --remeasure 0 --rpc-wait 10 --db " + db() + rpc("fleet", tracker));
  });
  // Kill the first server once it has measured twice: in the middle of the first or second batch.
  auto measured = [](const std::string& log) {
    std::size_t n = 0;
    for (std::size_t at = log.find("measured"); at != std::string::npos; at = log.find("measured", at + 1)) ++n;
    return n;
  };
  for (auto deadline = Clock::now() + std::chrono::seconds(120); Clock::now() < deadline && measured(slurp(doomed.log)) < 2;)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(doomed.process.pid(), SIGKILL);
  CommandRun run = tuning.get();
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.err, "rpc: device 127.0.0.1:" + std::to_string(doomed.port))) << "no transport failure seen: " << run.err;
  auto all = records();
  EXPECT_EQ(all.size(), 1u + 8u);  // nothing lost: every candidate is a record
  std::size_t ok = 0;
  for (const auto& r : all) {
    EXPECT_TRUE(r.error_kind == "ok" || r.error_kind == "transport_error") << r.error_kind << ": " << r.error_message;
    ok += r.error_kind == "ok";
  }
  EXPECT_GE(ok, 8u) << "the candidate in flight on the killed server is retried on the survivor";
  EXPECT_TRUE(contains(slurp(survivor.log), "measured"));
  EXPECT_EQ(integrity(), "ok\n");
}

// Inputs of the behaviour template (behaviour_template.hpp) on the CPU, one per behaviour.
std::vector<measure::MeasureInput> behaviour_inputs(const optune::testing::BehaviourTemplate& behaviour,
                                                    const std::vector<std::string>& behaviours) {
  const auto task = optune::testing::behaviour_task(behaviour);
  std::vector<measure::MeasureInput> inputs;
  for (const auto& b : behaviours) inputs.push_back({task, task->space.from_json({{"behaviour", b}})});
  return inputs;
}

std::vector<measure::BuildResult> quick_build(const std::vector<measure::MeasureInput>& inputs, const fs::path& dir) {
  measure::LocalBuilderOptions build_options;
  build_options.flags = {"-std=c++20", "-O1", "-fPIC", "-shared"};
  build_options.work_dir = dir.string();
  return measure::LocalBuilder(build_options).build(inputs);
}

// RpcRunner in-process against a real tracker and server: candidates that crash, abort, hang or
// compute a wrong answer become those records, and the server goes on measuring the rest.
TEST_F(RpcTest, FaultyCandidatesBecomeRecordsAndTheServerKeepsServing) {
  auto& tracker = start_tracker();
  auto& server = start_server("server", "faults", tracker.port);
  optune::testing::BehaviourTemplate behaviour;
  const auto inputs =
      behaviour_inputs(behaviour, {"segfault", "correct", "abort", "wrong", "hang", "syntax", "correct"});
  auto builds = quick_build(inputs, dir_ / "builds");

  measure::rpc::RpcRunnerOptions options;
  options.tracker = {"127.0.0.1", tracker.port};
  options.key = "faults";
  options.timing.timeout_seconds = 2;
  options.timing.repeat = 2;
  options.timing.min_repeat_ms = 1;
  measure::rpc::RpcRunner runner(options);
  auto results = runner.run(inputs, builds);
  std::vector<std::string> kinds;
  for (const auto& r : results) kinds.emplace_back(measure::error_kind_name(r.error));
  EXPECT_EQ(kinds, (std::vector<std::string>{"crash", "ok", "crash", "wrong_answer", "timeout", "build_error", "ok"}));
  EXPECT_FALSE(server.process.poll()) << slurp(server.log);
  // Measured objects are removed, but for those the builder keeps for reuse.
  for (const auto& b : builds)
    EXPECT_FALSE(!b.artifact.empty() && !b.kept && fs::exists(b.artifact)) << "artifacts are removed";
}

// A remote server times a comparison's repeats (a run of several rounds: the finalists') for the
// comparison's length (60 ms: three repeats take 180 ms, a quarter of it asserted, as the run that
// sizes a repeat may take longer than the runs after it) and a batch's for the batch's (1 ms), as its
// worker reports the timing back.
TEST_F(RpcTest, AComparisonIsTimedRemotelyForTheComparisonsLength) {
  auto& tracker = start_tracker();
  start_server("server", "sustained", tracker.port);
  optune::testing::BehaviourTemplate behaviour;
  const auto inputs = behaviour_inputs(behaviour, {"correct", "correct"});
  const auto builds = quick_build(inputs, dir_ / "builds");
  measure::rpc::RpcRunnerOptions options;
  options.tracker = {"127.0.0.1", tracker.port};
  options.key = "sustained";
  options.timing.timeout_seconds = 5;
  options.timing.repeat = 3;
  options.timing.min_repeat_ms = 1;
  options.timing.comparison_min_repeat_ms = 60;
  options.remove_artifacts = false;
  measure::rpc::RpcRunner runner(options);
  constexpr double kComparisonRoundAtLeast = 3 * 0.06 / 4;  // as LocalRunnerTest's: a loaded machine sizes repeats short
  for (const auto& result : runner.run(inputs, builds)) {
    EXPECT_EQ(result.error, measure::ErrorKind::kOk) << result.message;
    EXPECT_LT(result.timing_seconds.value_or(1), kComparisonRoundAtLeast) << "a batch: three repeats of 1 ms";
  }
  for (const auto& result : runner.run(inputs, builds, 2)) {
    EXPECT_EQ(result.error, measure::ErrorKind::kOk) << result.message;
    EXPECT_GE(result.timing_seconds.value_or(0), 2 * kComparisonRoundAtLeast) << "two rounds of 60 ms repeats";
  }
}

// A comparison (several rounds) is measured on one device of the key, though two are free: its
// ratios must not mix two devices (its later rounds ask the tracker for its first round's server).
// Each candidate takes about 0.2 s, so a batch would be shared.
TEST_F(RpcTest, AComparisonIsMeasuredOnOneOfTheKeysServers) {
  auto& tracker = start_tracker();
  // Not pinned to a core each: the task's device is this whole machine's CPU.
  auto& first = start_server("first", "pinned", tracker.port);
  auto& second = start_server("second", "pinned", tracker.port);
  optune::testing::BehaviourTemplate behaviour;
  const auto inputs = behaviour_inputs(behaviour, {"correct", "correct", "correct", "correct"});
  const auto builds = quick_build(inputs, dir_ / "builds");
  measure::rpc::RpcRunnerOptions options;
  options.tracker = {"127.0.0.1", tracker.port};
  options.key = "pinned";
  options.lease_wait_seconds = 20;
  options.timing.timeout_seconds = 5;
  options.timing.repeat = 4;
  options.timing.min_repeat_ms = 50;
  options.remove_artifacts = false;
  measure::rpc::RpcRunner runner(options);
  for (const auto& result : runner.run(inputs, builds, 2)) EXPECT_EQ(result.error, measure::ErrorKind::kOk) << result.message;
  const std::size_t on_first = measured_count(first.log), on_second = measured_count(second.log);
  EXPECT_EQ(on_first + on_second, 2u * 4u);
  EXPECT_TRUE(on_first == 0 || on_second == 0) << "first " << on_first << ", second " << on_second;
}

// A tracker restarted under a tuner (4 s away) is reached again within the lease wait (--rpc-wait):
// the batch is kept and measured on the server, which stayed up. The run ended at once (three
// tries without a pause, the batch lost).
TEST_F(RpcTest, ATrackerRestartIsWaitedForAndTheBatchKept) {
  auto& tracker = start_tracker();
  const unsigned short port = tracker.port;
  start_server("server", "restart", port);
  optune::testing::BehaviourTemplate behaviour;
  const auto inputs = behaviour_inputs(behaviour, {"correct", "correct", "correct"});
  const auto builds = quick_build(inputs, dir_ / "builds");

  tracker.process.kill();
  auto restarted = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::seconds(4));
    start("tracker-again", {"rpc", "tracker", "--port", std::to_string(port), "--heartbeat-timeout", "3"});
  });
  measure::rpc::RpcRunnerOptions options;
  options.tracker = {"127.0.0.1", port};
  options.key = "restart";
  options.lease_wait_seconds = 30;
  options.timing.timeout_seconds = 5;
  options.timing.repeat = 2;
  options.timing.min_repeat_ms = 1;
  measure::rpc::RpcRunner runner(options);
  std::vector<measure::MeasureResult> results;
  EXPECT_NO_THROW(results = runner.run(inputs, builds));
  restarted.get();
  ASSERT_EQ(results.size(), 3u);
  for (const auto& result : results) EXPECT_EQ(result.error, measure::ErrorKind::kOk) << result.message;
}

// The tracker alone, spoken to in-process: a second client waits in the queue while the only
// device is leased and gets it once released; a server that stops answering heartbeats leaves.
TEST_F(RpcTest, TrackerQueuesRequestsWhileBusyAndDropsSilentServers) {
  auto& tracker = start_tracker();
  auto& server = start_server("server", "solo", tracker.port);
  const measure::rpc::Endpoint endpoint{"127.0.0.1", tracker.port};
  measure::rpc::TrackerClient first(endpoint, {}), second(endpoint, {});
  auto held = first.request_lease("solo", 4, 20);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].device.value("name", ""), measure::rpc::RpcSession::open(held[0], {}, 5).device().name);
  auto waiting = std::async(std::launch::async, [&] { return second.request_lease("solo", 1, 20); });
  measure::rpc::TrackerClient observer(endpoint, {});
  for (auto deadline = Clock::now() + std::chrono::seconds(10);
       Clock::now() < deadline && observer.status()["queue"].empty();)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto busy = observer.status();
  EXPECT_EQ(busy["queue"].size(), 1u) << busy;
  EXPECT_EQ(busy["leases"].size(), 1u) << busy;
  CommandRun status = optune("rpc status --tracker 127.0.0.1:" + std::to_string(tracker.port));
  EXPECT_TRUE(contains(status.out, "queue (1)") && contains(status.out, "leased")) << status.out;
  first.release(held);
  auto granted = waiting.get();
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].endpoint.port, server.port);
  second.release(granted);

  ::kill(server.process.pid(), SIGSTOP);  // alive but silent: only the heartbeat timeout notices
  for (auto deadline = Clock::now() + std::chrono::seconds(15);
       Clock::now() < deadline && !observer.status()["servers"].empty();)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(observer.status()["servers"].empty()) << observer.status();
  EXPECT_TRUE(contains(slurp(tracker.log), "left the pool")) << slurp(tracker.log);
  EXPECT_TRUE(second.request_lease("solo", 1, 0.2).empty());
  ::kill(server.process.pid(), SIGCONT);
}

// Two network namespaces joined by a veth pair: tracker and server in one, listening on a
// non-loopback address (so a token is required), the tuner in the other.
class NetworkNamespaces {
 public:
  NetworkNamespaces() {
    const std::string id = std::to_string(::getpid() % 100000);
    server_ns = "optune-s" + id;
    tuner_ns = "optune-t" + id;
    if (!run("ip netns add " + server_ns)) {
      refusal = "the kernel or this container refuses network namespaces (ip netns add failed)";
      return;
    }
    created_server_ = true;
    created_tuner_ = run("ip netns add " + tuner_ns);
    const std::string a = "ovs" + id, b = "ovt" + id;
    bool ok = created_tuner_ && run("ip link add " + a + " type veth peer name " + b) &&
              run("ip link set " + a + " netns " + server_ns) && run("ip link set " + b + " netns " + tuner_ns) &&
              run("ip -n " + server_ns + " addr add 10.231.7.1/24 dev " + a) &&
              run("ip -n " + tuner_ns + " addr add 10.231.7.2/24 dev " + b) &&
              run("ip -n " + server_ns + " link set " + a + " up") && run("ip -n " + tuner_ns + " link set " + b + " up") &&
              run("ip -n " + server_ns + " link set lo up") && run("ip -n " + tuner_ns + " link set lo up");
    if (!ok) refusal = "could not wire the namespaces with a veth pair";
  }
  ~NetworkNamespaces() {  // deleting a namespace deletes its end of the veth pair, and so the pair
    if (created_server_) run("ip netns del " + server_ns);
    if (created_tuner_) run("ip netns del " + tuner_ns);
  }
  std::string server_ns, tuner_ns, refusal;
  static constexpr const char* kServerAddress = "10.231.7.1";

 private:
  static bool run(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()) == 0; }
  bool created_server_ = false, created_tuner_ = false;
};

TEST_F(RpcTest, ServerAndTunerInSeparateNetworkNamespaces) {
  NetworkNamespaces namespaces;
  if (!namespaces.refusal.empty()) GTEST_SKIP() << namespaces.refusal;
  std::string token = write_file("token", "netns-secret");
  const std::vector<std::string> in_server_ns = {"ip", "netns", "exec", namespaces.server_ns};
  const std::string host = NetworkNamespaces::kServerAddress;
  auto& tracker = start("tracker", {"rpc", "tracker", "--host", host, "--port", "0", "--token-file", token}, in_server_ns);
  fs::create_directories(dir_ / "server-work");
  auto& server = start("server", {"rpc", "server", "--host", host, "--port", "0", "--key", "far", "--token-file", token,
                                  "--tracker", host + ":" + std::to_string(tracker.port), "--workdir",
                                  (dir_ / "server-work").string()},
                       in_server_ns);
  const std::string rpc_address = " --rpc far@" + host + ":" + std::to_string(tracker.port);
  // The tracker is not reachable from here (the default namespace has no route to it) ...
  CommandRun unreachable = optune("rpc status --tracker " + host + ":" + std::to_string(tracker.port) + " --token-file " + token);
  EXPECT_NE(unreachable.code, 0);
  // ... but is from the tuner's namespace, across the veth pair.
  CommandRun run = optune(std::string(kTinyTune) + " --trials 2 --batch-size 2 --remeasure 0 --db " + db() +
                              " --token-file " + token + rpc_address,
                          "ip netns exec " + namespaces.tuner_ns);
  ASSERT_EQ(run.code, 0) << run.err << slurp(server.log) << slurp(tracker.log);
  ASSERT_EQ(records().size(), 3u);
  for (const auto& r : records()) EXPECT_EQ(r.error_kind, "ok") << r.error_message;
  EXPECT_TRUE(contains(slurp(server.log), "client 10.231.7.2:")) << slurp(server.log);
}

#ifdef OPTUNE_AARCH64_WORKER
// Cross-compiled candidates measured by an aarch64 worker under qemu user emulation: the host
// builds with configs/targets/aarch64-linux-gnu.toml, the server's worker measures. Timings are
// emulated; correctness is real (the aarch64 worker checks against its own reference).
TEST_F(RpcTest, Aarch64CandidatesMeasuredUnderQemu) {
  if (std::system("command -v qemu-aarch64 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "qemu-aarch64 is not installed (Debian package qemu-user; scripts/setup.sh installs it)";
  auto& tracker = start_tracker();
  auto& server = start_server("server", "arm", tracker.port,
                              {"--worker", OPTUNE_AARCH64_WORKER, "--worker-launcher", "qemu-aarch64 -L /usr/aarch64-linux-gnu"});
  EXPECT_TRUE(contains(server.announce, "aarch64")) << server.announce;
  CommandRun run = optune("tune --op gemm --shape 33,20,17 --tuner random --repeat 1 --min-repeat-ms 1 --quiet --seed 3 "
                          "--trials 3 --batch-size 3 --remeasure 0 --rpc-wait 20 --target cpu:aarch64-linux-gnu --db " +
                          db() + rpc("arm", tracker));
  ASSERT_EQ(run.code, 0) << run.out << run.err << slurp(server.log);
  auto all = records();
  ASSERT_EQ(all.size(), 1u + 3u);
  for (const auto& r : all) {
    EXPECT_EQ(r.error_kind, "ok") << r.error_message;
    EXPECT_EQ(r.target, "cpu:aarch64-linux-gnu");
    EXPECT_EQ(r.device_fingerprint.value("arch", ""), "aarch64") << r.device_fingerprint;
    auto isa = r.device_fingerprint.value("isa", std::vector<std::string>{});
    EXPECT_NE(std::find(isa.begin(), isa.end(), "neon"), isa.end()) << r.device_fingerprint;
    EXPECT_EQ(std::find(isa.begin(), isa.end(), "avx2"), isa.end()) << "host flags taken for the emulated CPU";
  }
  // Its worker has no OpenCL: an OpenCL target over RPC is bad input saying so.
  CommandRun no_opencl = optune("tune --op gemm --shape 8,8,8 --target opencl --trials 1 --rpc-wait 20 --db " + db() +
                                rpc("arm", tracker));
  EXPECT_EQ(no_opencl.code, 2) << no_opencl.err;
  // A CPU-only optune (-DOPTUNE_OPENCL=OFF) refuses the target before asking the server.
  const bool host_has_opencl = backends::target_forms().find("opencl") != std::string::npos;
  EXPECT_TRUE(contains(no_opencl.err, host_has_opencl ? "built without backend 'opencl'" : "unknown target 'opencl'"))
      << no_opencl.err;
  // Without --rpc a cross target is refused with a clear message.
  CommandRun refused = optune("tune --op gemm --shape 8,8,8 --target cpu:aarch64-linux-gnu --trials 1 --db " + db());
  EXPECT_EQ(refused.code, 2);
  EXPECT_TRUE(contains(refused.err, "--rpc")) << refused.err;
}

// The low precisions on Arm, cross-compiled for Armv8.2 with the dot-product and FP16 extensions
// (configs/targets/aarch64-dotprod-linux-gnu.toml) and checked by the aarch64 worker under qemu:
// int8 GEMM on SDOT (s8 activations, as Arm runs them; exact), f16 GEMM and int8 conv2d; and with
// the int8 matrix multiply too (aarch64-i8mm-linux-gnu.toml): int8 GEMM and conv2d on SMMLA, an odd
// M pairing a row with zeros and depths that are not whole octets.
TEST_F(RpcTest, Aarch64LowPrecisionCandidatesAreCheckedUnderQemu) {
  if (std::system("command -v qemu-aarch64 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "qemu-aarch64 is not installed (Debian package qemu-user; scripts/setup.sh installs it)";
  auto& tracker = start_tracker();
  start_server("server", "arm", tracker.port,
               {"--worker", OPTUNE_AARCH64_WORKER, "--worker-launcher", "qemu-aarch64 -L /usr/aarch64-linux-gnu"});
  const std::string dotprod = "cpu:aarch64-dotprod-linux-gnu", i8mm = "cpu:aarch64-i8mm-linux-gnu";
  const std::vector<std::pair<std::string, std::string>> runs = {
      {dotprod, "--op gemm --shape 29,40,132 --dtype i8"},
      {dotprod, "--op gemm --shape 21,30,70 --dtype f16"},
      {dotprod, "--op conv2d --shape N=1,C=12,H=7,W=9,K=10,R=3,S=3,pad=1 --dtype i8"},
      {i8mm, "--op gemm --shape 27,44,133 --dtype i8"},
      {i8mm, "--op conv2d --shape N=1,C=11,H=8,W=7,K=13,R=3,S=3,pad=1 --dtype i8"},
  };
  for (const auto& [target, workload] : runs) {
    CommandRun run = optune("tune " + workload + " --tuner random --repeat 1 --min-repeat-ms 1 --quiet --seed 4 "
                            "--trials 2 --batch-size 2 --remeasure 0 --rpc-wait 20 --target " + target + " --db " +
                            db() + rpc("arm", tracker));
    ASSERT_EQ(run.code, 0) << target << " " << workload << run.out << run.err;
  }
  auto all = records();
  ASSERT_EQ(all.size(), runs.size() * (1u + 2u));
  std::map<std::string, int> per_target;
  for (const auto& r : all) {
    EXPECT_EQ(r.error_kind, "ok") << r.target << " " << r.workload_key << ": " << r.error_message;
    ++per_target[r.target];
    if (r.workload_key.find(".i8.") != std::string::npos)
      EXPECT_EQ(r.config.value("activations", ""), "s8") << r.config;
  }
  EXPECT_EQ(per_target, (std::map<std::string, int>{{dotprod, 9}, {i8mm, 6}}));
}
#endif

}  // namespace
