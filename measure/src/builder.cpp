#include "optune/measure/builder.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace optune::measure {

void write_build_file(const std::string& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) throw EnvironmentFailure("cannot create the build file " + path + ": " + std::strerror(errno));
  // A full disk may show only when the buffer is flushed: fclose's result counts as much as fwrite's.
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_error = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed)
    throw EnvironmentFailure("cannot write the build file " + path + ": " + std::strerror(written ? errno : write_error));
}

}  // namespace optune::measure
