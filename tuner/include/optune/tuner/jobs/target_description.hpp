// A cross-compilation target (configs/targets/<triple>.toml): the compiler and flags with which
// the host builds candidates for a `cpu:<triple>` target that a remote device then measures.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace optune::tuner {

struct TargetDescription {
  std::string triple;
  std::string compiler;
  std::vector<std::string> flags;
};

class TargetDescriptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Reads one description file; throws TargetDescriptionError naming the file and the problem.
TargetDescription load_target_description(const std::string& path);
// `<dir>/<triple>.toml` from the first directory that has it; throws TargetDescriptionError
// listing where it looked.
TargetDescription find_target_description(const std::string& triple, const std::vector<std::string>& dirs);

}  // namespace optune::tuner
