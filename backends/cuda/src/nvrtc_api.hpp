// NVRTC, the CUDA C++ compiler as a library, loaded at run time like the driver (driver_api.hpp):
// one process-wide table of the functions compile.cpp calls, and why it is unusable when it is.
#pragma once

#include <string>
#include <vector>

#include "cuda_abi.hpp"

namespace optune::backends::cuda {

struct NvrtcApi {
  std::string missing;  // empty when usable; else one line naming what was tried and why it failed
  std::string library;  // the file loaded, e.g. /usr/local/cuda/lib64/libnvrtc.so.13
  int major = 0;        // nvrtcVersion's
  int minor = 0;

  nvrtcVersion_t nvrtcVersion = nullptr;
  nvrtcGetErrorString_t nvrtcGetErrorString = nullptr;
  nvrtcCreateProgram_t nvrtcCreateProgram = nullptr;
  nvrtcDestroyProgram_t nvrtcDestroyProgram = nullptr;
  nvrtcAddNameExpression_t nvrtcAddNameExpression = nullptr;
  nvrtcCompileProgram_t nvrtcCompileProgram = nullptr;
  nvrtcGetProgramLogSize_t nvrtcGetProgramLogSize = nullptr;
  nvrtcGetProgramLog_t nvrtcGetProgramLog = nullptr;
  nvrtcGetCUBINSize_t nvrtcGetCUBINSize = nullptr;
  nvrtcGetCUBIN_t nvrtcGetCUBIN = nullptr;
  nvrtcGetPTXSize_t nvrtcGetPTXSize = nullptr;
  nvrtcGetPTX_t nvrtcGetPTX = nullptr;
  nvrtcGetLoweredName_t nvrtcGetLoweredName = nullptr;
  nvrtcGetNumSupportedArchs_t nvrtcGetNumSupportedArchs = nullptr;
  nvrtcGetSupportedArchs_t nvrtcGetSupportedArchs = nullptr;

  bool is_available() const { return missing.empty(); }
  // The real architectures this NVRTC compiles for, ascending (75, 80, 86, ..., 120 for 13.0).
  std::vector<int> supported_archs() const;
  // "nvrtcCompileProgram: NVRTC_ERROR_INVALID_OPTION".
  std::string error_text(const char* call, nvrtcResult code) const;

  // The process-wide table: the first of libnvrtc.so.13, .so.12, .so on the loader's path, then
  // the same names in kToolkitLibraryDir (where a toolkit keeps it, often off the loader's path).
  static const NvrtcApi& get();
  // The table of one library file or soname.
  static NvrtcApi load(const std::string& library);
};

inline constexpr const char* kToolkitLibraryDir = "/usr/local/cuda/lib64/";

}  // namespace optune::backends::cuda
