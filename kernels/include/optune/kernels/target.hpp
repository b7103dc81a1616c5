// Target: where candidates run, as text "<backend>" or "<backend>:<spec>": "cpu" (this machine),
// "cpu:aarch64-linux-gnu" (cross-compiled, measured over RPC), "opencl", "opencl:<platform>:<device>".
// Which backends exist, and what a spec means to each, is the backends' business
// (backends/registry.hpp parses and checks a target); this is the plain data and its syntax.
#pragma once

#include <string>
#include <string_view>

namespace optune::kernels {

struct Target {
  std::string backend = "cpu";  // a registered backend's name
  std::string spec;             // that backend's canonical text for the rest; "" = its default

  std::string str() const { return spec.empty() ? backend : backend + ":" + spec; }
  friend bool operator==(const Target&, const Target&) = default;
};

// Splits "<backend>[:<spec>]", trimming both; checks only that the backend is a lower-case word
// (throws std::invalid_argument "target: ..."). The spec is left for the backend to parse.
Target split_target(std::string_view text);

}  // namespace optune::kernels
