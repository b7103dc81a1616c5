// The folder a builder writes its candidates' files to: a fresh one below TMPDIR, removed with
// the builder, or one the caller gives (created if missing, and kept).
#pragma once

#include <string>

namespace optune::measure {

class BuildDirectory {
 public:
  // `path` "": a fresh "<TMPDIR>/optune-<kind>-XXXXXX" (throws std::runtime_error when it cannot
  // be made); else that folder.
  BuildDirectory(const std::string& path, const std::string& kind);
  ~BuildDirectory();
  BuildDirectory(const BuildDirectory&) = delete;
  BuildDirectory& operator=(const BuildDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_ = false;
};

}  // namespace optune::measure
