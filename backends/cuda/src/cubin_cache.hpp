// Compiled CUDA modules kept on disk between runs, as OpenCL programs are: a candidate compiled
// once (by any run, any process) is not compiled again. Keyed by everything that decides the
// module: NVRTC's version, the architecture, the options, the name expressions and the source.
// Files: <dir>/<sha256 of the key>.{key,module,json}; the key file is compared in full, and every
// file is written under a temporary name and renamed, so concurrent runs never read half of one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optune::backends::cuda {

struct CachedModule {
  std::vector<char> module;
  bool is_ptx = false;
  std::map<std::string, std::string> lowered_names;  // name expression -> symbol
  double compile_seconds = 0;                        // of the compile that made it
};

class CubinCache {
 public:
  explicit CubinCache(std::string dir);  // "": caches nothing
  std::optional<CachedModule> find(const std::string& key) const;
  // Failures to write are ignored: a cache that cannot be written costs compile time, no result.
  void store(const std::string& key, const CachedModule& module) const;

 private:
  std::string dir_;
};

}  // namespace optune::backends::cuda
