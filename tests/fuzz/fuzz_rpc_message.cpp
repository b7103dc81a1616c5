// The RPC frame and message parser, as a hostile peer meets it: the 16-byte header, the JSON
// metadata, a server's check of a measure request and the device fingerprints that welcomes and
// registrations carry. Input: the bytes of one frame (header, then metadata).
// Promises: nothing but FrameError (and the parsers' own std::invalid_argument for fingerprints)
// comes out; a header that decodes re-encodes to the same header; metadata that decodes survives
// an encode and decode unchanged; a measure request the server's check passes, the worker reads.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "fuzz_support.hpp"
#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/measure/rpc/frame.hpp"
#include "optune/measure/rpc/rpc_server.hpp"
#include "optune/measure/timing_policy.hpp"
#include "optune/measure/worker_messages.hpp"

using namespace optune::measure::rpc;

namespace {

// A request the server passes is one the worker reads as it does (worker_loop.cpp) without an
// exception: the check before the upload is written must not let through what fails after.
void check_passed_request(const nlohmann::json& request) {
  try {
    const auto typed = request.get<optune::measure::WorkerRequest>();
    (void)optune::kernels::parse_workload_key(typed.workload);
    (void)optune::kernels::split_target(typed.target);
  } catch (const std::exception& error) {
    optune::fuzz::broken(std::string("a measure request passed the server's check but not the worker's reading: ") +
                         error.what());
  }
}

void check_request_and_fingerprints(const nlohmann::json& metadata) {
  if (measure_request_problem(metadata).empty()) check_passed_request(metadata.at("request"));
  for (const char* key : {"device", "devices"}) {
    auto found = metadata.find(key);
    if (found == metadata.end()) continue;
    const nlohmann::json fingerprints = found->is_array() ? *found : nlohmann::json::array({*found});
    for (const auto& fingerprint : fingerprints) {
      try {
        (void)optune::kernels::DeviceInfo::from_fingerprint(fingerprint);
      } catch (const std::exception&) {  // a bad fingerprint is refused: the caller's message says so
      }
    }
  }
}

void check_round_trip(MessageType type, const nlohmann::json& metadata) {
  std::string head;
  try {
    head = encode_frame_head({type, metadata, {}});
  } catch (const nlohmann::json::type_error&) {
    return;  // a string nlohmann reads but will not write (invalid UTF-8 it let through): not ours
  }
  std::array<char, kHeaderBytes> header;
  std::memcpy(header.data(), head.data(), kHeaderBytes);
  const FrameHeader decoded = decode_frame_header(header, 0);
  if (decoded.type != type || decoded.payload_bytes != 0 || decoded.metadata_bytes != head.size() - kHeaderBytes)
    optune::fuzz::broken("a frame head we encoded decodes differently");
  if (decode_metadata(std::string_view(head).substr(kHeaderBytes)) != metadata)
    optune::fuzz::broken("metadata changed in an encode and decode");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeaderBytes) return 0;
  std::array<char, kHeaderBytes> header_bytes;
  std::memcpy(header_bytes.data(), data, kHeaderBytes);
  const std::string_view rest(reinterpret_cast<const char*>(data) + kHeaderBytes, size - kHeaderBytes);
  MessageType type = MessageType::kMeasure;
  try {
    FrameHeader header = decode_frame_header(header_bytes, kDefaultMaxPayloadBytes);
    type = header.type;
    if (encode_frame_head({header.type, nlohmann::json::object(), {}}).compare(4, 4, header_bytes.data() + 4, 4) != 0)
      optune::fuzz::broken("a decoded header re-encodes to another version or type");
  } catch (const FrameError&) {
  }
  try {
    const nlohmann::json metadata = decode_metadata(rest);
    check_request_and_fingerprints(metadata);
    check_round_trip(type, metadata);
  } catch (const FrameError&) {
  }
  return 0;
}
