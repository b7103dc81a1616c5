#include "precompiled_headers.hpp"

#include <chrono>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "optune/measure/subprocess.hpp"

namespace optune::measure {
namespace fs = std::filesystem;

PrecompiledHeaders::PrecompiledHeaders(std::string dir, double timeout_seconds)
    : dir_(std::move(dir)), timeout_seconds_(timeout_seconds) {}

std::string first_optune_header(const std::string& source) {
  std::istringstream lines(source);
  std::string line;
  bool in_comment = false;
  while (std::getline(lines, line)) {
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) continue;
    const std::string text = line.substr(start);
    if (in_comment) {
      if (text.find("*/") != std::string::npos) in_comment = false;
      continue;
    }
    if (text.rfind("//", 0) == 0) continue;
    if (text.rfind("/*", 0) == 0) {
      in_comment = text.find("*/", 2) == std::string::npos;
      continue;
    }
    const std::string directive = "#include <optune/";
    if (text.rfind(directive, 0) != 0) return "";
    const auto close = text.find('>');
    return close == std::string::npos ? "" : text.substr(10, close - 10);
  }
  return "";
}

std::optional<std::string> PrecompiledHeaders::include_dir(const std::vector<std::string>& command,
                                                           const std::string& source) {
  const std::string header = first_optune_header(source);
  if (header.empty()) return std::nullopt;
  std::string key;
  for (const auto& word : command) key += word + '\0';
  key += header;
  if (const auto known = by_command_and_header_.find(key); known != by_command_and_header_.end()) return known->second;
  std::optional<std::string>& dir = by_command_and_header_[key];

  std::string path;  // the header as the command's include dirs find it first
  for (const auto& word : command)
    if (word.rfind("-I", 0) == 0 && fs::exists(fs::path(word.substr(2)) / header)) {
      path = (fs::path(word.substr(2)) / header).string();
      break;
    }
  if (path.empty()) return std::nullopt;
  const std::string own_dir = dir_ + "/pch_" + std::to_string(by_command_and_header_.size());
  const fs::path gch = fs::path(own_dir) / (header + ".gch");
  std::error_code error;
  fs::create_directories(gch.parent_path(), error);
  if (error) return std::nullopt;
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), {"-x", "c++-header", path, "-o", gch.string()});
  try {
    Subprocess compiler = Subprocess::spawn(argv, {.pipe_stdio = false, .output_file = own_dir + "/compile.log"});
    const auto status = compiler.wait_until(std::chrono::steady_clock::now() +
                                            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(timeout_seconds_)));
    if (!status) compiler.kill();
    if (status && status->exited && status->code == 0 && fs::exists(gch)) dir = own_dir;
  } catch (const std::runtime_error&) {  // a compiler that cannot start: the candidates' compiles say so
  }
  return dir;
}

}  // namespace optune::measure
