// DeviceInfo's derived facts and its fingerprint. The fingerprint's key names and its id's hash
// are stored in every record: changing either splits one device's history in two.
#include "optune/kernels/device_info.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace optune::kernels {
namespace {

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
  // Only OpenCL devices carry it: adding it to CPU fingerprints would change their ids.
  if (kind == "opencl") json["preferred_vector_width"] = preferred_vector_width;
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
  DeviceInfo info;
  try {
    info.kind = json.value("kind", info.kind);
    info.name = json.value("name", info.name);
    info.arch = json.value("arch", info.arch);
    info.cores = json.value("cores", info.cores);
    info.isa = sorted_unique(json.value("isa", info.isa));
    info.l1d_bytes = json.value("l1d_bytes", info.l1d_bytes);
    info.l2_bytes = json.value("l2_bytes", info.l2_bytes);
    info.l3_bytes = json.value("l3_bytes", info.l3_bytes);
    info.platform = json.value("platform", info.platform);
    info.driver_version = json.value("driver_version", info.driver_version);
    info.local_mem_bytes = json.value("local_mem_bytes", info.local_mem_bytes);
    info.max_work_group_size = json.value("max_work_group_size", info.max_work_group_size);
    info.max_work_item_sizes = json.value("max_work_item_sizes", info.max_work_item_sizes);
    info.preferred_vector_width = json.value("preferred_vector_width", info.preferred_vector_width);
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument("device fingerprint: " + std::string(error.what()));
  }
  return info;
}

}  // namespace optune::kernels
