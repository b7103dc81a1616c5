#include "optune/measure/rpc/rpc_session.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "optune/measure/local_runner.hpp"
#include "optune/measure/rpc/proxy.hpp"

namespace optune::measure::rpc {

RpcSession RpcSession::open(const LeasedServer& server, const Token& token, double connect_timeout_seconds) {
  Channel channel = server.via_proxy
                        ? connect_through_proxy(server.endpoint, token, server.key, connect_timeout_seconds)
                        : Channel::connect(server.endpoint, Channel::Seconds(connect_timeout_seconds));
  nlohmann::json welcome = connect_handshake(channel, token, {{"role", "client"}});
  RpcSession session(std::move(channel));
  try {
    session.device_ = kernels::DeviceInfo::from_fingerprint(welcome.at("device"));
    for (const auto& fingerprint : welcome.value("devices", nlohmann::json::array({welcome["device"]})))
      session.devices_.push_back(kernels::DeviceInfo::from_fingerprint(fingerprint));
  } catch (const std::exception& error) {
    throw TransportError(std::string("server welcome without a device: ") + error.what());
  }
  return session;
}

kernels::DeviceInfo RpcSession::describe(const std::string& target, double reply_timeout_seconds) {
  channel_.send({MessageType::kDescribe, {{"target", target}}, {}}, Channel::Seconds(reply_timeout_seconds));
  Frame reply = expect(channel_, MessageType::kDescription, Channel::Seconds(reply_timeout_seconds));
  if (auto error = reply.metadata.find("error"); error != reply.metadata.end())
    throw NoSuchDeviceError(error->is_string() ? error->get<std::string>() : error->dump());
  try {
    return kernels::DeviceInfo::from_fingerprint(reply.metadata.at("device"));
  } catch (const std::exception& error) {
    throw TransportError(std::string("malformed description from the server: ") + error.what());
  }
}

WorkerReply RpcSession::measure(const std::string& artifact_path, const WorkerRequest& request,
                                double reply_timeout_seconds) {
  std::ifstream in(artifact_path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read artifact " + artifact_path);
  std::stringstream bytes;
  bytes << in.rdbuf();
  Frame frame{MessageType::kMeasure,
              {{"request", request}, {"artifact_suffix", std::filesystem::path(artifact_path).extension().string()}},
              bytes.str()};
  channel_.send(frame, Channel::Seconds(reply_timeout_seconds));
  Frame reply = expect(channel_, MessageType::kResult, Channel::Seconds(reply_timeout_seconds));
  if (!reply.metadata.contains("reply") || !reply.metadata["reply"].is_object())
    throw TransportError("result message without a reply");
  try {
    return reply.metadata["reply"].get<WorkerReply>();
  } catch (const nlohmann::json::exception& error) {
    throw TransportError(std::string("malformed reply from the server: ") + error.what());
  }
}

}  // namespace optune::measure::rpc
