// optune-nvrtc: one NVRTC compile per process, so that a crash or a hang inside NVRTC (it has
// both, on hostile candidates) costs one candidate, not the tuner.
//
//   optune-nvrtc REQUEST.json BINARY_OUT RESULT.json
//
// REQUEST.json: {"source": "kernel.cu", "arch": "sm_90a", "options": ["-DTILE=16"],
//                "name_expressions": ["&matmul<float, 16>"], "program_name": "kernel.cu" (optional),
//                "include_dir": "/usr/local/cuda/include" (optional)}
// The source path is relative to the request's directory unless absolute.
// RESULT.json: {"ok", "nvrtc": {"library", "version"}, "is_ptx", "lowered_names": {expression: symbol},
//               "log", "seconds", "binary_bytes"}
// Exit status: 0 compiled (binary and result written), 1 compile error (result with the log
// written, no binary), 2 bad input or no NVRTC (one line on stderr).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "compile.hpp"
#include "nvrtc_api.hpp"

namespace {

namespace fs = std::filesystem;
using optune::backends::cuda::CompileRequest;
using optune::backends::cuda::CompileResult;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

CompileRequest parse_request(const fs::path& request_path) {
  const nlohmann::json json = nlohmann::json::parse(read_file(request_path));
  CompileRequest request;
  fs::path source = json.at("source").get<std::string>();
  if (source.is_relative()) source = request_path.parent_path() / source;
  request.source = read_file(source);
  request.program_name = json.value("program_name", source.filename().string());
  request.arch = json.at("arch").get<std::string>();
  request.options = json.value("options", std::vector<std::string>{});
  request.name_expressions = json.value("name_expressions", std::vector<std::string>{});
  request.include_dir = json.value("include_dir", std::string{});
  return request;
}

nlohmann::json result_json(const CompileResult& result) {
  const auto& nvrtc = optune::backends::cuda::NvrtcApi::get();
  return {{"ok", result.ok},
          {"nvrtc", {{"library", nvrtc.library}, {"version", std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor)}}},
          {"is_ptx", result.is_ptx},
          {"lowered_names", result.lowered_names},
          {"log", result.log},
          {"seconds", result.seconds},
          {"binary_bytes", result.binary.size()}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: optune-nvrtc REQUEST.json BINARY_OUT RESULT.json\n";
    return 2;
  }
  try {
    const CompileRequest request = parse_request(argv[1]);
    const CompileResult result = optune::backends::cuda::compile_cuda(request);
    const std::string json = result_json(result).dump(2) + "\n";
    if (result.ok) write_file(argv[2], result.binary.data(), result.binary.size());
    write_file(argv[3], json.data(), json.size());
    return result.ok ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "optune-nvrtc: " << error.what() << "\n";
    return 2;
  }
}
