#include "optune/kernels/opencl/program_text.hpp"

#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace optune::opencl {
namespace {

std::string expand(std::string_view text, const std::function<std::string(const std::string&)>& read,
                   std::set<std::string>& pasted, int depth) {
  if (depth > 8) throw std::runtime_error("opencl: includes nested deeper than 8 (a cycle?)");
  // A comment may follow the file name, as any C preprocessor allows (NVIDIA's compiler sees only
  // the pasted text, so an include left in place fails there).
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)"\s*(//.*|/\*.*\*/\s*)?$)re");
  std::istringstream lines{std::string(text)};
  std::string out, line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, match, include)) {
      const std::string name = match[1];
      if (pasted.insert(name).second) out += expand(read(name), read, pasted, depth + 1);
      continue;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string with_includes(std::string_view text, const std::function<std::string(const std::string&)>& read) {
  std::set<std::string> pasted;
  return expand(text, read, pasted, 0);
}

}  // namespace optune::opencl
