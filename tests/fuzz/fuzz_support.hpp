// What the fuzz targets share: a finding is an abort with the input's story on stderr (libFuzzer
// saves the input as crash-<hash>), so a broken promise counts like a crash or a sanitizer report.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace optune::fuzz {

[[noreturn]] inline void broken(const std::string& promise) {
  std::fprintf(stderr, "fuzz: broken promise: %s\n", promise.c_str());
  std::abort();
}

}  // namespace optune::fuzz
