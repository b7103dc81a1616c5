// A server under an authenticated but hostile client, on real loopback sockets against the real
// `optune rpc server`: bad measure requests leave no upload behind, sessions are capped, and an
// announced payload costs memory only as its bytes arrive and times out when they stop coming.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/listener.hpp"
#include "optune/measure/rpc/rpc_session.hpp"
#include "optune/measure/rpc/tracker.hpp"
#include "rpc_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune;
using namespace optune::rpc_test;
using measure::rpc::Channel;
using measure::rpc::Frame;
using measure::rpc::MessageType;
using Seconds = Channel::Seconds;

// Resident memory of a process, in MiB (/proc/PID/status).
double resident_mib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  return -1;
}

std::size_t thread_count(pid_t pid) {
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    (void)entry;
    ++count;
  }
  return count;
}

Channel client_of(const Daemon& server) {
  Channel channel = Channel::connect({"127.0.0.1", server.port}, Seconds(5));
  measure::rpc::connect_handshake(channel, {}, {{"role", "client"}});
  return channel;
}

// Whether the peer ends the connection (an error frame, then end of file) within `within`.
bool closed_within(Channel& channel, Seconds within) {
  try {
    for (;;) channel.receive(within);
  } catch (const measure::rpc::TransportError& error) {
    return std::string(error.what()).find("no answer within") == std::string::npos;
  }
}

// A loopback port nothing listens on (bound by the system, then let go).
unsigned short unused_port() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

const nlohmann::json kGoodRequest = {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"repeat", 1}}}};

TEST_F(RpcTest, BadMeasureRequestsAreRefusedBeforeTheirUploadIsWritten) {
  auto& server = start_server("server", "k", 0, {"--max-artifact-mb", "16"});
  const std::string payload(8 << 20, 'x');
  Channel channel = client_of(server);
  const std::vector<nlohmann::json> bad = {
      {{"workload", 5}},
      {{"workload", "gemm.f32.M-1.N0.K99999999999"}, {"timing", {{"repeat", 1}}}},
      {{"workload", "gemm.f32.M8.N8.K8"}},
      {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"repeat", 1e300}}}},
      {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"timeout_seconds", "forever"}}}},
      {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"comparison_min_repeat_ms", 1e9}}}},
      {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"repeat", 1}}}, {"seed", -3}},
      {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"repeat", 1}}}, {"backend", "opencl"}},
      {{"workload", "gemm.f32.M8.N8.K8"}, {"timing", {{"repeat", 1}}}, {"describe", true}},
  };
  for (const auto& request : bad) {
    channel.send({MessageType::kMeasure, {{"request", request}, {"artifact_suffix", ".so"}}, payload}, Seconds(30));
    Frame reply = measure::rpc::expect(channel, MessageType::kResult, Seconds(60));
    EXPECT_EQ(reply.metadata["reply"].value("status", ""), "runtime_error") << request;
    EXPECT_TRUE(contains(reply.metadata["reply"].value("message", ""), "bad measure request")) << reply.metadata;
    EXPECT_TRUE(fs::is_empty(dir_ / "server-work")) << request;
  }
  // The session goes on: a good request is measured (a runtime error: the bytes are no shared
  // object), and its file is gone afterwards too.
  channel.send({MessageType::kMeasure, {{"request", kGoodRequest}, {"artifact_suffix", ".so"}}, payload}, Seconds(30));
  Frame reply = measure::rpc::expect(channel, MessageType::kResult, Seconds(60));
  EXPECT_TRUE(contains(reply.metadata["reply"].value("message", ""), "dlopen")) << reply.metadata;
  EXPECT_TRUE(fs::is_empty(dir_ / "server-work"));
  EXPECT_FALSE(server.process.poll()) << slurp(server.log);
}

TEST_F(RpcTest, SessionsBeyondTheLimitAreToldTheServerIsBusy) {
  auto& server = start_server("server", "k", 0, {"--max-sessions", "2"});
  const measure::rpc::LeasedServer direct{0, "k", {"127.0.0.1", server.port}, false, {}};
  const std::size_t threads_before = thread_count(server.process.pid());
  std::optional<measure::rpc::RpcSession> first = measure::rpc::RpcSession::open(direct, {}, 5);
  auto second = measure::rpc::RpcSession::open(direct, {}, 5);
  try {
    measure::rpc::RpcSession::open(direct, {}, 5);
    FAIL() << "a third session was served";
  } catch (const measure::rpc::TransportError& error) {
    EXPECT_TRUE(contains(error.what(), "busy") && contains(error.what(), "at most 2")) << error.what();
  }
  // A session that ends gives its place back.
  first.reset();
  std::optional<measure::rpc::RpcSession> third;
  for (auto deadline = Clock::now() + std::chrono::seconds(10); !third && Clock::now() < deadline;) {
    try {
      third = measure::rpc::RpcSession::open(direct, {}, 5);
    } catch (const measure::rpc::TransportError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_TRUE(third.has_value()) << slurp(server.log);
  EXPECT_TRUE(contains(slurp(server.log), "busy: this server serves at most 2")) << slurp(server.log);
}

// Issue 40.6: connections that never finish their handshake (a scan, a flood) take no session
// slot and make way for new ones, so clients holding the token always get in, to a server and to
// a tracker; and `rpc status` against a tracker it cannot reach exits 1 (not bad input).
TEST_F(RpcTest, IdleUnauthenticatedConnectionsNeverKeepAClientOut) {
  const std::string token = write_file("token", "flood-secret");
  auto& server = start_server("server", "k", 0, {"--max-sessions", "2", "--token-file", token});
  const measure::rpc::LeasedServer direct{0, "k", {"127.0.0.1", server.port}, false, {}};
  const std::size_t threads_before = thread_count(server.process.pid());
  std::vector<Channel> flood;
  for (int i = 0; i < 200; ++i) flood.push_back(Channel::connect({"127.0.0.1", server.port}, Seconds(5)));
  // Each genuine handshake gets in while the flood is still open; both slots are served.
  const measure::rpc::Token genuine{"flood-secret"};
  auto first = measure::rpc::RpcSession::open(direct, genuine, 5);
  auto second = measure::rpc::RpcSession::open(direct, genuine, 5);
  // Beyond the newest few of one address, the flood was closed: a challenge, then the end.
  std::size_t closed = 0;
  for (auto& channel : flood) {
    Frame challenge = channel.receive(Seconds(10));
    EXPECT_EQ(challenge.type, MessageType::kChallenge);
    if (closed_within(channel, Seconds(10))) ++closed;
  }
  EXPECT_EQ(closed, flood.size()) << "every idle connection ends: made way, or out of its handshake's time";
  EXPECT_LE(thread_count(server.process.pid()), threads_before + measure::rpc::kMaxPendingPerAddress + 4);
  EXPECT_TRUE(contains(slurp(server.log), "still in their handshake")) << slurp(server.log);

  auto& tracker = start_tracker({"--max-sessions", "8", "--token-file", token});
  std::vector<Channel> tracker_flood;
  for (int i = 0; i < 260; ++i) tracker_flood.push_back(Channel::connect({"127.0.0.1", tracker.port}, Seconds(5)));
  CommandRun status = optune("rpc status --format json --token-file " + token + " --tracker 127.0.0.1:" +
                             std::to_string(tracker.port));
  EXPECT_EQ(status.code, 0) << status.err << slurp(tracker.log);
  EXPECT_TRUE(nlohmann::json::parse(status.out).contains("servers")) << status.out;
  const std::string nowhere = "127.0.0.1:" + std::to_string(unused_port());
  CommandRun unreachable = optune("rpc status --token-file " + token + " --tracker " + nowhere);
  EXPECT_EQ(unreachable.code, 1) << unreachable.err;
  EXPECT_TRUE(contains(unreachable.err, nowhere)) << unreachable.err;
  CommandRun wrong_token = optune("rpc status --token-file " + write_file("wrong", "not-it") + " --tracker 127.0.0.1:" +
                                  std::to_string(tracker.port));
  EXPECT_EQ(wrong_token.code, 2) << wrong_token.err;
}

TEST_F(RpcTest, AnnouncedPayloadsCostMemoryOnlyAsTheyArriveAndStalledOnesTimeOut) {
  auto& server = start_server("server", "k", 0, {"--max-artifact-mb", "64"});
  const double resident_before = resident_mib(server.process.pid());
  // Five sessions each announce a 63 MiB artifact, send 1 KiB of it and fall silent.
  std::vector<Channel> stalled;
  for (int i = 0; i < 5; ++i) {
    Channel channel = client_of(server);
    std::string head = measure::rpc::encode_frame_head({MessageType::kMeasure, {{"request", kGoodRequest}}, {}});
    const std::uint32_t announced = 63u << 20;
    for (int byte = 0; byte < 4; ++byte) head[12 + byte] = static_cast<char>(announced >> (24 - 8 * byte));
    asio::write(channel.socket(), asio::buffer(head + std::string(1024, 'x')));
    stalled.push_back(std::move(channel));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double resident_during = resident_mib(server.process.pid());
  EXPECT_LT(resident_during - resident_before, 20) << "resident " << resident_before << " -> " << resident_during;
  // Stalled mid-frame for the stall timeout (10 s), not the session's idle hour: dropped.
  const auto start = Clock::now();
  for (auto& channel : stalled) EXPECT_TRUE(closed_within(channel, Seconds(30)));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(25));
  EXPECT_TRUE(contains(slurp(server.log), "receiving the rest of a frame")) << slurp(server.log);
  EXPECT_FALSE(server.process.poll()) << slurp(server.log);
}

TEST_F(RpcTest, ProxyHoldsNoMoreIdleServerConnectionsThanItsLimit) {
  auto& proxy = start("proxy", {"rpc", "proxy", "--port", "0", "--max-sessions", "3"});
  auto register_idle = [&] {
    Channel channel = Channel::connect({"127.0.0.1", proxy.port}, Seconds(5));
    measure::rpc::connect_handshake(channel, {}, {{"role", "server"}});
    channel.send({MessageType::kProxyRegister, {{"key", "k"}}, {}}, Seconds(5));
    return channel;
  };
  std::vector<Channel> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(register_idle());
  auto waiting = [&] {
    std::string log = slurp(proxy.log);
    std::size_t count = 0;
    for (auto at = log.find("waiting under k"); at != std::string::npos; at = log.find("waiting under k", at + 1)) ++count;
    return count;
  };
  for (auto deadline = Clock::now() + std::chrono::seconds(10); waiting() < 3 && Clock::now() < deadline;)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Channel refused = register_idle();
  Frame reply = refused.receive(Seconds(10));
  EXPECT_EQ(reply.type, MessageType::kError);
  EXPECT_TRUE(contains(reply.metadata.value("message", ""), "at most 3 idle")) << reply.metadata;
  for (auto& channel : idle) {  // the three are kept, silent until a client is joined to them
    try {
      channel.receive(Seconds(0.2));
      ADD_FAILURE() << "an idle connection was sent a frame";
    } catch (const measure::rpc::TransportError& error) {
      EXPECT_TRUE(contains(error.what(), "no answer within")) << error.what();
    }
  }
}

}  // namespace
