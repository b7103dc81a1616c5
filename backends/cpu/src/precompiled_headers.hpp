// Precompiled headers for CPU candidates. Most of a candidate's compile is the parse of its
// template's kernel header (gemm.hpp and the microkernels it includes), the same text for every
// candidate of a template; only the few lines that instantiate it differ. The first candidate of a
// command (compiler, flags, include dirs) whose source starts with an optune header has that header
// compiled once (`-x c++-header`) into <dir>/<header>.gch, and every candidate of the command
// then has <dir> searched first: GCC takes a valid .gch found there in place of parsing the header.
// A compiler that cannot use it (Clang reads no .gch for an #include; a .gch whose flags differ)
// finds the header itself in the next directory, as before. Either way the object is the same;
// only the compile's time differs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace optune::measure {

class PrecompiledHeaders {
 public:
  // `dir`: where the .gch files go (the builder's folder); `timeout_seconds`: a header's compile.
  PrecompiledHeaders(std::string dir, double timeout_seconds);

  // The include dir holding the precompiled first header of `source` for `command` (the compile's
  // argv without file names), compiled on the first call for the pair; nullopt where the source
  // does not start with an optune header, the header is not under the command's include dirs, or
  // its compile failed (then the candidates compile without it).
  std::optional<std::string> include_dir(const std::vector<std::string>& command, const std::string& source);

 private:
  std::string dir_;
  double timeout_seconds_;
  std::map<std::string, std::optional<std::string>> by_command_and_header_;
};

// The first header `source` includes with #include <...>, where it is an optune header and nothing
// but comments and blank lines comes before it (what GCC's precompiled header may replace); "" else.
std::string first_optune_header(const std::string& source);

}  // namespace optune::measure
