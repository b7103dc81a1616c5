#include "optune/measure/rpc/frame.hpp"

#include <cstring>

namespace optune::measure::rpc {
namespace {

constexpr char kMagic[4] = {'O', 'P', 'T', 'R'};

void put_u16(std::string& out, std::uint16_t value) {
  out.push_back(static_cast<char>(value >> 8));
  out.push_back(static_cast<char>(value & 0xff));
}

void put_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}

std::uint32_t get(const std::array<char, kHeaderBytes>& bytes, std::size_t offset, std::size_t count) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < count; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  return value;
}

}  // namespace

std::string_view message_type_name(MessageType type) {
  switch (type) {
    case MessageType::kChallenge: return "challenge";
    case MessageType::kAuthenticate: return "authenticate";
    case MessageType::kWelcome: return "welcome";
    case MessageType::kError: return "error";
    case MessageType::kMeasure: return "measure";
    case MessageType::kResult: return "result";
    case MessageType::kRegister: return "register";
    case MessageType::kHeartbeat: return "heartbeat";
    case MessageType::kRequestLease: return "request_lease";
    case MessageType::kLease: return "lease";
    case MessageType::kRelease: return "release";
    case MessageType::kStatus: return "status";
    case MessageType::kStatusReply: return "status_reply";
    case MessageType::kProxyRegister: return "proxy_register";
    case MessageType::kProxyConnect: return "proxy_connect";
    case MessageType::kProxyStart: return "proxy_start";
    case MessageType::kDescribe: return "describe";
    case MessageType::kDescription: return "description";
  }
  return "unknown";
}

std::string encode_frame_head(const Frame& frame) {
  // A default-constructed json (`{}` in a brace initialiser) is null: sent as an empty object.
  std::string metadata = frame.metadata.is_null() ? "{}" : frame.metadata.dump();
  if (metadata.size() > kMaxMetadataBytes) throw FrameError("frame metadata over the limit of 1 MiB");
  if (frame.payload.size() > UINT32_MAX) throw FrameError("frame payload over 4 GiB");
  std::string out(kMagic, sizeof kMagic);
  put_u16(out, kProtocolVersion);
  put_u16(out, static_cast<std::uint16_t>(frame.type));
  put_u32(out, static_cast<std::uint32_t>(metadata.size()));
  put_u32(out, static_cast<std::uint32_t>(frame.payload.size()));
  return out + metadata;
}

FrameHeader decode_frame_header(const std::array<char, kHeaderBytes>& bytes, std::uint32_t max_payload_bytes) {
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw FrameError("not an optune rpc peer (bad frame magic)");
  auto version = get(bytes, 4, 2);
  if (version != kProtocolVersion)
    throw FrameError("peer speaks optune rpc protocol version " + std::to_string(version) +
                     ", this side speaks version " + std::to_string(kProtocolVersion));
  auto type = get(bytes, 6, 2);
  if (type < 1 || type > static_cast<std::uint32_t>(MessageType::kLast))
    throw FrameError("unknown message type " + std::to_string(type));
  FrameHeader header{static_cast<MessageType>(type), get(bytes, 8, 4), get(bytes, 12, 4)};
  if (header.metadata_bytes > kMaxMetadataBytes)
    throw FrameError("frame metadata of " + std::to_string(header.metadata_bytes) + " bytes over the limit of " +
                     std::to_string(kMaxMetadataBytes));
  if (header.payload_bytes > max_payload_bytes)
    throw FrameError("frame payload of " + std::to_string(header.payload_bytes) + " bytes over the limit of " +
                     std::to_string(max_payload_bytes));
  return header;
}

nlohmann::json decode_metadata(std::string_view text) {
  nlohmann::json metadata = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!metadata.is_object()) throw FrameError("frame metadata is not a JSON object");
  return metadata;
}

}  // namespace optune::measure::rpc
