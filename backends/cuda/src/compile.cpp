#include "compile.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "nvrtc_api.hpp"

namespace optune::backends::cuda {
namespace {

// An NVRTC program, destroyed once.
class Program {
 public:
  Program(const NvrtcApi& api, nvrtcProgram program) : api_(api), program_(program) {}
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (program_) api_.nvrtcDestroyProgram(&program_);
  }
  nvrtcProgram get() const { return program_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram program_;
};

bool has_option(const std::vector<std::string>& options, std::string_view prefix) {
  return std::any_of(options.begin(), options.end(), [&](const std::string& o) { return o.starts_with(prefix); });
}

std::vector<std::string> nvrtc_options(const CompileRequest& request, const NvrtcApi& api) {
  std::vector<std::string> options = request.options;
  options.push_back("--gpu-architecture=" + request.arch);
  // C++17 unless the caller chose: NVRTC's default dialect changes between releases.
  if (!has_option(options, "--std") && !has_option(options, "-std")) options.push_back("--std=c++17");
  const std::string include_dir = request.include_dir.empty() ? toolkit_include_dir(api.library) : request.include_dir;
  if (!include_dir.empty()) options.push_back("--include-path=" + include_dir);
  return options;
}

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
  std::size_t size = 0;
  if (api.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // the size counts the terminating NUL
  return log;
}

// Appends a failed call's line to the log and makes the result a failure.
void fail(CompileResult& result, const std::string& line) {
  result.ok = false;
  if (!result.log.empty() && result.log.back() != '\n') result.log += '\n';
  result.log += line + '\n';
}

void read_binary(const NvrtcApi& api, nvrtcProgram program, CompileResult& result) {
  std::size_t size = 0;
  const auto size_of = result.is_ptx ? api.nvrtcGetPTXSize : api.nvrtcGetCUBINSize;
  const auto contents = result.is_ptx ? api.nvrtcGetPTX : api.nvrtcGetCUBIN;
  const char* call = result.is_ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN";
  nvrtcResult code = size_of(program, &size);
  if (code == NVRTC_SUCCESS) {
    result.binary.resize(size);
    code = contents(program, result.binary.data());
  }
  if (code != NVRTC_SUCCESS) {
    result.binary.clear();
    fail(result, api.error_text(call, code));
  }
}

void read_lowered_names(const NvrtcApi& api, nvrtcProgram program, const CompileRequest& request,
                        CompileResult& result) {
  for (const std::string& expression : request.name_expressions) {
    const char* lowered = nullptr;
    const nvrtcResult code = api.nvrtcGetLoweredName(program, expression.c_str(), &lowered);
    if (code != NVRTC_SUCCESS || !lowered) {
      fail(result, api.error_text(("nvrtcGetLoweredName(" + expression + ")").c_str(), code));
      continue;
    }
    result.lowered_names[expression] = lowered;
  }
}

}  // namespace

CompileResult compile_cuda(const CompileRequest& request) {
  const NvrtcApi& api = NvrtcApi::get();
  if (!api.is_available()) throw std::runtime_error(api.missing);
  const auto start = std::chrono::steady_clock::now();
  CompileResult result;
  result.is_ptx = request.arch.starts_with("compute_");

  nvrtcProgram handle = nullptr;
  nvrtcResult code = api.nvrtcCreateProgram(&handle, request.source.c_str(), request.program_name.c_str(), 0,
                                            nullptr, nullptr);
  if (code != NVRTC_SUCCESS) {
    fail(result, api.error_text("nvrtcCreateProgram", code));
    return result;
  }
  Program program(api, handle);
  bool names_added = true;
  for (const std::string& expression : request.name_expressions) {
    code = api.nvrtcAddNameExpression(program.get(), expression.c_str());
    if (code != NVRTC_SUCCESS) {
      names_added = false;
      fail(result, api.error_text(("nvrtcAddNameExpression(" + expression + ")").c_str(), code));
    }
  }
  const std::vector<std::string> options = nvrtc_options(request, api);
  std::vector<const char*> option_pointers;
  for (const std::string& option : options) option_pointers.push_back(option.c_str());

  code = api.nvrtcCompileProgram(program.get(), static_cast<int>(option_pointers.size()), option_pointers.data());
  result.log = program_log(api, program.get()) + result.log;
  result.ok = code == NVRTC_SUCCESS && names_added;
  if (code != NVRTC_SUCCESS) fail(result, api.error_text("nvrtcCompileProgram", code));
  if (result.ok) read_binary(api, program.get(), result);
  if (result.ok) read_lowered_names(api, program.get(), request, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string compile_arch(int major, int minor, const std::vector<int>& supported_archs) {
  const int wanted = major * 10 + minor;
  if (std::find(supported_archs.begin(), supported_archs.end(), wanted) != supported_archs.end()) {
    return fmt::format("sm_{}{}", wanted, major >= 9 ? "a" : "");
  }
  int best = 0;
  for (int arch : supported_archs) {
    if (arch <= wanted) best = std::max(best, arch);
  }
  if (best == 0) {
    throw std::invalid_argument(fmt::format(
        "NVRTC cannot compile for compute capability {}.{}: it supports no architecture at or below sm_{}", major,
        minor, wanted));
  }
  return fmt::format("compute_{}", best);
}

std::string toolkit_include_dir(const std::string& nvrtc_library) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {"/usr/local/cuda/include"};
  if (!nvrtc_library.empty()) {
    candidates.push_back(fs::path(nvrtc_library).parent_path().parent_path() / "include");
  }
  std::error_code error;
  for (const fs::path& directory : candidates) {
    if (fs::exists(directory / "cuda_fp16.h", error)) return directory.string();
  }
  return {};
}

}  // namespace optune::backends::cuda
