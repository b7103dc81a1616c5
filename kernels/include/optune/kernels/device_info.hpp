// DeviceInfo: what a template needs to know about a device to shape its space (SIMD width,
// caches, cores; OpenCL limits), and the fingerprint stored with every record so results of
// different devices are never mixed. Detection lives in measure/ (it asks the OS or OpenCL);
// this is the plain data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace optune::kernels {

// An OpenCL device's isa flag for cl_khr_integer_dot_product (packed int8 dot products).
inline constexpr const char* kIntegerDotProductIsa = "cl_khr_integer_dot_product";

struct DeviceInfo {
  std::string kind = "cpu";  // the backend: "cpu", "opencl", ...
  std::string name;          // CPU model name, or OpenCL device name
  std::string arch;          // "x86_64", "aarch64", ...
  int cores = 1;             // cores available to this process (CPU) or compute units (OpenCL)
  std::vector<std::string> isa;  // relevant ISA flags, sorted: "avx2", "avx512f", "fma", "neon";
                                 // NVIDIA OpenCL devices: "sm_90" (compute capability 9.0);
                                 // OpenCL: kIntegerDotProductIsa where the device has it
  std::int64_t l1d_bytes = 32 * 1024;
  std::int64_t l2_bytes = 512 * 1024;
  std::int64_t l3_bytes = 0;
  // OpenCL only.
  std::string platform;
  std::string driver_version;
  std::int64_t local_mem_bytes = 0;
  std::int64_t max_work_group_size = 0;
  std::vector<std::int64_t> max_work_item_sizes;
  int preferred_vector_width = 0;  // CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT; 0 = unknown
  // Further facts a backend reports by name (a GPU's warp size, grid limits, registers per block),
  // integers; empty for CPUs and OpenCL devices, whose fingerprints (and ids) stay as they were.
  std::map<std::string, std::int64_t, std::less<>> attributes;

  bool has_isa(const std::string& flag) const;
  // Widest float32 SIMD vector the kernels should use: 16 (AVX-512), 8 (AVX2), 4 (NEON/SSE).
  int simd_f32_lanes() const;
  // An NVIDIA OpenCL device's compute capability as 10 * major + minor (90 for an H100), from
  // its "sm_XY" isa flag; 0 for every other device.
  int nvidia_compute_capability() const;

  // The fingerprint stored with records, and its short stable id (hex of a hash of it).
  nlohmann::json fingerprint() const;
  std::string fingerprint_id() const;
  static DeviceInfo from_fingerprint(const nlohmann::json& json);
};

}  // namespace optune::kernels
