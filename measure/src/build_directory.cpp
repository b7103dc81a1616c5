#include "optune/measure/build_directory.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <stdlib.h>

namespace optune::measure {
namespace fs = std::filesystem;

BuildDirectory::BuildDirectory(const std::string& path, const std::string& kind) {
  if (!path.empty()) {
    path_ = path;
    fs::create_directories(path_);
    return;
  }
  std::string pattern = (fs::temp_directory_path() / ("optune-" + kind + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a build directory " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
  owned_ = true;
}

BuildDirectory::~BuildDirectory() {
  if (!owned_) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace optune::measure
