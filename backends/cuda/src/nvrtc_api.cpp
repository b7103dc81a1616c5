#include "nvrtc_api.hpp"

#include <fmt/format.h>

#include "shared_library.hpp"

namespace optune::backends::cuda {
namespace {

template <typename Function>
void resolve(const SharedLibrary& library, NvrtcApi& api, Function& slot, const char* name) {
  slot = reinterpret_cast<Function>(library.symbol(name));
  if (!slot && api.missing.empty()) api.missing = fmt::format("{} has no {}", library.path, name);
}

void resolve_all(const SharedLibrary& library, NvrtcApi& api) {
  resolve(library, api, api.nvrtcVersion, "nvrtcVersion");
  resolve(library, api, api.nvrtcGetErrorString, "nvrtcGetErrorString");
  resolve(library, api, api.nvrtcCreateProgram, "nvrtcCreateProgram");
  resolve(library, api, api.nvrtcDestroyProgram, "nvrtcDestroyProgram");
  resolve(library, api, api.nvrtcAddNameExpression, "nvrtcAddNameExpression");
  resolve(library, api, api.nvrtcCompileProgram, "nvrtcCompileProgram");
  resolve(library, api, api.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  resolve(library, api, api.nvrtcGetProgramLog, "nvrtcGetProgramLog");
  resolve(library, api, api.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
  resolve(library, api, api.nvrtcGetCUBIN, "nvrtcGetCUBIN");
  resolve(library, api, api.nvrtcGetPTXSize, "nvrtcGetPTXSize");
  resolve(library, api, api.nvrtcGetPTX, "nvrtcGetPTX");
  resolve(library, api, api.nvrtcGetLoweredName, "nvrtcGetLoweredName");
  resolve(library, api, api.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs");
  resolve(library, api, api.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs");
}

}  // namespace

NvrtcApi NvrtcApi::load(const std::string& name) {
  NvrtcApi api;
  SharedLibrary library = open_shared_library(name);
  if (!library.is_open()) {
    api.missing = fmt::format("no NVRTC ({})", library.error);
    return api;
  }
  api.library = library.path;
  resolve_all(library, api);
  if (api.missing.empty() && api.nvrtcVersion(&api.major, &api.minor) != NVRTC_SUCCESS) {
    api.missing = fmt::format("{}: nvrtcVersion failed", library.path);
  }
  return api;
}

const NvrtcApi& NvrtcApi::get() {
  static const NvrtcApi api = [] {
    const char* names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    std::string first_reason;
    for (const std::string directory : {"", kToolkitLibraryDir}) {
      for (const char* name : names) {
        NvrtcApi candidate = load(directory + name);
        if (candidate.is_available()) return candidate;
        if (first_reason.empty()) first_reason = candidate.missing;
      }
    }
    NvrtcApi none;
    none.missing = fmt::format("{}; also tried libnvrtc.so.12, libnvrtc.so and {}", first_reason, kToolkitLibraryDir);
    return none;
  }();
  return api;
}

std::vector<int> NvrtcApi::supported_archs() const {
  int count = 0;
  if (!is_available() || nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

std::string NvrtcApi::error_text(const char* call, nvrtcResult code) const {
  const char* text = nvrtcGetErrorString ? nvrtcGetErrorString(code) : nullptr;
  return text ? fmt::format("{}: {}", call, text) : fmt::format("{}: NVRTC error {}", call, code);
}

}  // namespace optune::backends::cuda
