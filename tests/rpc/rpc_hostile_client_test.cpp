// A server under an authenticated but hostile client, on real loopback sockets against the real
// `optune rpc server`: bad measure requests leave no upload behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "optune/measure/rpc/auth.hpp"
#include "optune/measure/rpc/channel.hpp"
#include "optune/measure/rpc/rpc_session.hpp"
#include "rpc_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune;
using namespace optune::rpc_test;
using measure::rpc::Channel;
using measure::rpc::Frame;
using measure::rpc::MessageType;
using Seconds = Channel::Seconds;

Channel client_of(const Daemon& server) {
  Channel channel = Channel::connect({"127.0.0.1", server.port}, Seconds(5));
  measure::rpc::connect_handshake(channel, {}, {{"role", "client"}});
  return channel;
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

}  // namespace
