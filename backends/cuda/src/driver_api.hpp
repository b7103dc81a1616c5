// The CUDA driver API, loaded from libcuda.so.1 at run time: one process-wide table of the functions
// optune calls, the reason it is unusable when it is (no driver, the toolkit's stub), and CUDA's
// error codes turned into messages at this boundary. Everything CUDA in optune calls through here.
#pragma once

#include <stdexcept>
#include <string>

#include "cuda_abi.hpp"

namespace optune::backends::cuda {

struct DriverApi {
  // Empty when the driver is usable; else one line saying why not, e.g.
  // "no CUDA driver (libcuda.so.1: cannot open shared object file: No such file or directory)".
  std::string missing;
  std::string library;  // the file loaded, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.1
  // cuInit's answer: CUDA_ERROR_NO_DEVICE leaves the table usable with no device to list.
  CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;

  cuInit_t cuInit = nullptr;
  cuDriverGetVersion_t cuDriverGetVersion = nullptr;
  cuDeviceGetCount_t cuDeviceGetCount = nullptr;
  cuDeviceGet_t cuDeviceGet = nullptr;
  cuDeviceGetName_t cuDeviceGetName = nullptr;
  cuDeviceGetPCIBusId_t cuDeviceGetPCIBusId = nullptr;
  cuDeviceGetAttribute_t cuDeviceGetAttribute = nullptr;
  cuDeviceTotalMem_t cuDeviceTotalMem = nullptr;
  cuDevicePrimaryCtxRetain_t cuDevicePrimaryCtxRetain = nullptr;
  cuDevicePrimaryCtxRelease_t cuDevicePrimaryCtxRelease = nullptr;
  cuDevicePrimaryCtxReset_t cuDevicePrimaryCtxReset = nullptr;
  cuCtxSetCurrent_t cuCtxSetCurrent = nullptr;
  cuStreamCreate_t cuStreamCreate = nullptr;
  cuStreamDestroy_t cuStreamDestroy = nullptr;
  cuStreamSynchronize_t cuStreamSynchronize = nullptr;
  cuModuleLoadData_t cuModuleLoadData = nullptr;
  cuModuleUnload_t cuModuleUnload = nullptr;
  cuModuleGetFunction_t cuModuleGetFunction = nullptr;
  cuFuncSetAttribute_t cuFuncSetAttribute = nullptr;
  cuLaunchKernel_t cuLaunchKernel = nullptr;
  cuEventCreate_t cuEventCreate = nullptr;
  cuEventRecord_t cuEventRecord = nullptr;
  cuEventSynchronize_t cuEventSynchronize = nullptr;
  cuEventElapsedTime_t cuEventElapsedTime = nullptr;
  cuEventDestroy_t cuEventDestroy = nullptr;
  cuMemAlloc_t cuMemAlloc = nullptr;
  cuMemFree_t cuMemFree = nullptr;
  cuMemcpyHtoD_t cuMemcpyHtoD = nullptr;
  cuMemcpyDtoH_t cuMemcpyDtoH = nullptr;
  cuMemsetD8_t cuMemsetD8 = nullptr;
  cuStreamBeginCapture_t cuStreamBeginCapture = nullptr;
  cuStreamEndCapture_t cuStreamEndCapture = nullptr;
  cuGraphInstantiateWithFlags_t cuGraphInstantiateWithFlags = nullptr;
  cuGraphLaunch_t cuGraphLaunch = nullptr;
  cuGraphExecDestroy_t cuGraphExecDestroy = nullptr;
  cuGraphDestroy_t cuGraphDestroy = nullptr;
  cuTensorMapEncodeTiled_t cuTensorMapEncodeTiled = nullptr;
  cuTensorMapEncodeIm2col_t cuTensorMapEncodeIm2col = nullptr;
  cuGetErrorName_t cuGetErrorName = nullptr;
  cuGetErrorString_t cuGetErrorString = nullptr;

  bool is_available() const { return missing.empty(); }
  bool has_devices() const { return is_available() && init_result == CUDA_SUCCESS; }

  // The process-wide table of libcuda.so.1, loaded and cuInit'ed on first use. Process-wide because
  // the driver is: it holds one set of contexts per process whoever loads it.
  static const DriverApi& get();
  // get(), or a std::runtime_error carrying `missing`.
  static const DriverApi& require();
  // The table of one library file or soname, cuInit'ed (for get() and for tests; a library once
  // loaded keeps its soname for the process, so tests use this in child processes only).
  static DriverApi load(const std::string& library);
};

// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"; the driver names the
// code where it can, a short table of optune's own where it cannot (no driver, a stub).
std::string error_text(CUresult code);
// The same through a given table (DriverApi::load names cuInit's failure before get() returns).
std::string error_text(const DriverApi& api, CUresult code);

// A failed driver call: "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access
// was encountered". Callers that measure candidates catch it and turn it into a result.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& call, CUresult code);
  CUresult code() const { return code_; }
  bool is_sticky() const;

 private:
  CUresult code_;
};

inline void check(CUresult code, const char* call) {
  if (code != CUDA_SUCCESS) throw CudaError(call, code);
}

// Whether `code` leaves the process's CUDA state unusable (a kernel's illegal address, assert,
// illegal instruction, ...): every later call returns the same error, and only a new process
// recovers. A runner that sees one must restart its worker.
bool is_sticky(CUresult code);

}  // namespace optune::backends::cuda
