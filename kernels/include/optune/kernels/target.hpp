// Target: where candidates run (DESIGN.md): "cpu" (this machine, native ISA), "cpu:<triple>"
// (cross-compiled, measured over RPC), "opencl" (first OpenCL device) and
// "opencl:<platform>:<device>" (index or name substring).
#pragma once

#include <string>
#include <string_view>

namespace optune::kernels {

enum class Backend { kCpu, kOpenCL };

struct Target {
  Backend backend = Backend::kCpu;
  std::string triple;    // cpu only; "" means this machine, compiled with -march=native
  std::string platform;  // opencl only; "" means the first
  std::string device;    // opencl only; "" means the first

  std::string str() const;  // canonical text form, parse(str()) == *this
  bool is_native_cpu() const { return backend == Backend::kCpu && triple.empty(); }
  friend bool operator==(const Target&, const Target&) = default;
};

Target parse_target(std::string_view text);  // throws std::invalid_argument
std::string_view backend_name(Backend backend);  // "cpu", "opencl"

}  // namespace optune::kernels
