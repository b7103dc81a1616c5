// Target text forms (DESIGN.md): cpu, cpu:<triple>, opencl, opencl:<platform>[:<device>].
// An OpenCL platform is written without ':' (the first ':' after it starts the device); an
// empty platform before a device ("opencl::1") means the first platform.
#include "optune/kernels/target.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

#include "trim.hpp"

namespace optune::kernels {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("target: " + what);
}

[[noreturn]] void unknown(std::string_view text) {
  fail("unknown target '" + std::string(text) +
       "' (expected cpu, cpu:<triple>, opencl or opencl:<platform>:<device>)");
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::string_view backend_name(Backend backend) {
  return backend == Backend::kCpu ? "cpu" : "opencl";
}

std::string Target::str() const {
  if (backend == Backend::kCpu) return triple.empty() ? "cpu" : "cpu:" + triple;
  if (platform.empty() && device.empty()) return "opencl";
  if (device.empty()) return "opencl:" + platform;
  return "opencl:" + platform + ":" + device;
}

Target parse_target(std::string_view raw) {
  const std::string_view text = trim(raw);
  Target target;
  if (text == "cpu") return target;
  if (starts_with(text, "cpu:")) {
    target.triple = std::string(text.substr(4));
    if (target.triple.empty()) fail("empty triple in '" + std::string(text) + "'");
    if (target.triple.find_first_of(" \t:") != std::string::npos) {
      fail("bad triple '" + target.triple + "' (e.g. aarch64-linux-gnu)");
    }
    return target;
  }
  target.backend = Backend::kOpenCL;
  if (text == "opencl") return target;
  if (!starts_with(text, "opencl:")) unknown(text);
  const std::string_view rest = text.substr(7);
  const auto colon = rest.find(':');
  target.platform = std::string(trim(rest.substr(0, colon)));
  if (colon != std::string_view::npos) {
    target.device = std::string(trim(rest.substr(colon + 1)));
    if (target.device.empty()) fail("empty device in '" + std::string(text) + "'");
  } else if (target.platform.empty()) {
    fail("empty platform in '" + std::string(text) + "'");
  }
  return target;
}

}  // namespace optune::kernels
