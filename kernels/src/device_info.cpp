// DeviceInfo's derived facts and its fingerprint. The fingerprint's key names and its id's hash
// are stored in every record: changing either splits one device's history in two.
#include "optune/kernels/device_info.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace optune::kernels {
namespace {

// A count of a fingerprint's (cores, bytes, sizes) as an integer from `min` to `max`. Fingerprints
// come from peers too (a server's welcome, a registration at the tracker): a number out of the
// field's range is refused here, as converting it would be undefined behaviour (found by
// fuzz_rpc_message: "l1d_bytes": 3.3e39).
std::int64_t count_value(const nlohmann::json& value, const char* key, std::int64_t min, std::int64_t max) {
  std::optional<std::int64_t> number;
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() <= static_cast<std::uint64_t>(max)) number = static_cast<std::int64_t>(value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    number = value.get<std::int64_t>();
  }
  if (!number || *number < min || *number > max)
    throw std::invalid_argument("device fingerprint: " + std::string(key) + ": expected an integer from " +
                                std::to_string(min) + " to " + std::to_string(max) + ", got " + value.dump());
  return *number;
}

template <class Int>
Int count(const nlohmann::json& json, const char* key, Int fallback, std::int64_t min, std::int64_t max) {
  auto found = json.find(key);
  return found == json.end() ? fallback : static_cast<Int>(count_value(*found, key, min, max));
}

// FNV-1a, 64 bit: tiny, stable across platforms and library versions (unlike std::hash).
std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::vector<std::string> sorted_unique(std::vector<std::string> flags) {
  std::sort(flags.begin(), flags.end());
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  return flags;
}

}  // namespace

bool DeviceInfo::has_isa(const std::string& flag) const {
  return std::find(isa.begin(), isa.end(), flag) != isa.end();
}

int DeviceInfo::simd_f32_lanes() const {
  if (has_isa("avx512f")) return 16;
  if (has_isa("avx2")) return 8;
  if (has_isa("neon") || has_isa("asimd")) return 4;
  const bool has_sse = std::any_of(isa.begin(), isa.end(), [](const std::string& flag) {
    return flag.rfind("sse", 0) == 0;
  });
  if (has_sse) return 4;
  // SSE2 and NEON are part of the base x86_64 and aarch64 ABIs.
  if (kind == "cpu" && (arch == "x86_64" || arch == "aarch64")) return 4;
  return 1;
}

int DeviceInfo::nvidia_compute_capability() const {
  for (const std::string& flag : isa) {
    if (flag.size() > 3 && flag.rfind("sm_", 0) == 0 &&
        std::all_of(flag.begin() + 3, flag.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::stoi(flag.substr(3));
  }
  return 0;
}

nlohmann::json DeviceInfo::fingerprint() const {
  // nlohmann::json objects keep keys sorted, so dump() is canonical.
  nlohmann::json json{
      {"kind", kind},
      {"name", name},
      {"arch", arch},
      {"cores", cores},
      {"isa", sorted_unique(isa)},
      {"l1d_bytes", l1d_bytes},
      {"l2_bytes", l2_bytes},
      {"l3_bytes", l3_bytes},
      {"platform", platform},
      {"driver_version", driver_version},
      {"local_mem_bytes", local_mem_bytes},
      {"max_work_group_size", max_work_group_size},
      {"max_work_item_sizes", max_work_item_sizes},
  };
  // Only devices that report it (OpenCL's) carry it: adding it to CPU fingerprints would change
  // their ids.
  if (preferred_vector_width > 0) json["preferred_vector_width"] = preferred_vector_width;
  if (!attributes.empty()) json["attributes"] = attributes;
  return json;
}

std::string DeviceInfo::fingerprint_id() const {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(fnv1a64(fingerprint().dump())));
  return hex;
}

// Missing keys keep their defaults, so fingerprints written by older versions still load.
DeviceInfo DeviceInfo::from_fingerprint(const nlohmann::json& json) {
  if (!json.is_object()) {
    throw std::invalid_argument("device fingerprint: expected a JSON object, got " +
                                std::string(json.type_name()));
  }
  constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50;
  DeviceInfo info;
  try {
    info.kind = json.value("kind", info.kind);
    info.name = json.value("name", info.name);
    info.arch = json.value("arch", info.arch);
    info.cores = count(json, "cores", info.cores, 1, 1 << 20);
    info.isa = sorted_unique(json.value("isa", info.isa));
    info.l1d_bytes = count(json, "l1d_bytes", info.l1d_bytes, 0, kMaxBytes);
    info.l2_bytes = count(json, "l2_bytes", info.l2_bytes, 0, kMaxBytes);
    info.l3_bytes = count(json, "l3_bytes", info.l3_bytes, 0, kMaxBytes);
    info.platform = json.value("platform", info.platform);
    info.driver_version = json.value("driver_version", info.driver_version);
    info.local_mem_bytes = count(json, "local_mem_bytes", info.local_mem_bytes, 0, kMaxBytes);
    info.max_work_group_size = count(json, "max_work_group_size", info.max_work_group_size, 0, kMaxBytes);
    if (auto sizes = json.find("max_work_item_sizes"); sizes != json.end()) {
      if (!sizes->is_array()) throw std::invalid_argument("device fingerprint: max_work_item_sizes: expected an array");
      info.max_work_item_sizes.clear();
      for (const auto& size : *sizes) info.max_work_item_sizes.push_back(count_value(size, "max_work_item_sizes", 0, kMaxBytes));
    }
    info.preferred_vector_width = count(json, "preferred_vector_width", info.preferred_vector_width, 0, 1024);
    if (auto attributes = json.find("attributes"); attributes != json.end()) {
      if (!attributes->is_object()) throw std::invalid_argument("device fingerprint: attributes: expected an object");
      for (const auto& [name, value] : attributes->items())
        info.attributes[name] = count_value(value, ("attributes." + name).c_str(), 0, kMaxBytes);
    }
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument("device fingerprint: " + std::string(error.what()));
  }
  return info;
}

}  // namespace optune::kernels
