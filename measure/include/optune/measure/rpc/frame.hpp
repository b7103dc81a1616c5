// The RPC wire format: every message is one frame, a fixed 16-byte header followed by JSON
// metadata and an optional binary payload (an artifact file).
//
//   offset 0  magic "OPTR" (4 bytes)
//          4  protocol version (u16, big endian)
//          6  message type (u16)
//          8  metadata length (u32), at most kMaxMetadataBytes
//         12  payload length (u32), at most the receiver's limit
//
// Parsing is strict: a wrong magic, an unknown type, a length over its limit, metadata that is not
// a JSON object, or a peer of another protocol version is a FrameError naming what was wrong.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace optune::measure::rpc {

// 2: describe/description (a server describes the device of a client's target, e.g. an OpenCL one).
inline constexpr std::uint16_t kProtocolVersion = 2;
inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr std::uint32_t kMaxMetadataBytes = 1 << 20;  // JSON metadata: 1 MiB
inline constexpr std::uint32_t kDefaultMaxPayloadBytes = 256u << 20;  // artifacts: 256 MiB

enum class MessageType : std::uint16_t {
  kChallenge = 1,    // listener -> connector: nonce, whether a token is required
  kAuthenticate,     // connector -> listener: role, HMAC of the nonce
  kWelcome,          // listener -> connector: accepted (a server adds its CPU device and all its devices)
  kError,            // either way: "message"; the sender closes the connection after it
  kMeasure,          // client -> server: worker request, payload = artifact file
  kResult,           // server -> client: the worker's reply
  kRegister,         // server -> tracker: key, address, devices; then heartbeats on that connection
  kHeartbeat,        // server -> tracker, tracker -> server (ack)
  kRequestLease,     // client -> tracker: key, how many devices at most, how long to wait
  kLease,            // tracker -> client: leased servers
  kRelease,          // client -> tracker: lease ids given back
  kStatus,           // client -> tracker: pool, leases, queue
  kStatusReply,      // tracker -> client
  kProxyRegister,    // server -> proxy: an idle connection of key
  kProxyConnect,     // client -> proxy: reach a server of key
  kProxyStart,       // proxy -> server or client: the two ends are joined; the server's session begins
  kDescribe,         // client -> server: a target ("opencl:0:0")
  kDescription,      // server -> client: the device it measures that target on, or an error naming its devices
  kLast = kDescription,
};

std::string_view message_type_name(MessageType type);

class FrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Frame {
  MessageType type = MessageType::kError;
  nlohmann::json metadata = nlohmann::json::object();
  std::string payload;  // bytes
};

struct FrameHeader {
  MessageType type;
  std::uint32_t metadata_bytes;
  std::uint32_t payload_bytes;
};

// Header and metadata bytes of a frame (the payload follows them on the wire).
std::string encode_frame_head(const Frame& frame);
// Throws FrameError on a bad magic, version, type or a length over its limit.
FrameHeader decode_frame_header(const std::array<char, kHeaderBytes>& bytes, std::uint32_t max_payload_bytes);
// Throws FrameError unless `text` is a JSON object.
nlohmann::json decode_metadata(std::string_view text);

}  // namespace optune::measure::rpc
