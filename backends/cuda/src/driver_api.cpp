#include "driver_api.hpp"

#include <fmt/format.h>

#include "shared_library.hpp"

namespace optune::backends::cuda {
namespace {

// Fills the table's slots: through cuGetProcAddress_v2 at the 12.0 ABI where the driver has it
// (the driver then picks the right variant of each function), else by dlsym of the variant's
// exported name, as drivers before 12.0 and the toolkit's stub need.
class Resolver {
 public:
  Resolver(const SharedLibrary& library, DriverApi& api) : library_(library), api_(api) {
    proc_address_ = reinterpret_cast<cuGetProcAddress_v2_t>(library.symbol("cuGetProcAddress_v2"));
  }

  template <typename Function>
  void operator()(Function& slot, const char* name, const char* exported_name = nullptr) {
    void* function = nullptr;
    if (proc_address_) {
      CUdriverProcAddressQueryResult status = -1;
      if (proc_address_(name, &function, kDriverAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
          status != CU_GET_PROC_ADDRESS_SUCCESS) {
        function = nullptr;
      }
    }
    if (!function) function = library_.symbol(exported_name ? exported_name : name);
    if (!function && api_.missing.empty()) {
      api_.missing = fmt::format("{} has no {} (a driver older than CUDA 12.0?)", library_.path, name);
    }
    slot = reinterpret_cast<Function>(function);
  }

 private:
  const SharedLibrary& library_;
  DriverApi& api_;
  cuGetProcAddress_v2_t proc_address_ = nullptr;
};

void resolve_all(const SharedLibrary& library, DriverApi& api) {
  Resolver resolve(library, api);
  resolve(api.cuInit, "cuInit");
  resolve(api.cuDriverGetVersion, "cuDriverGetVersion");
  resolve(api.cuDeviceGetCount, "cuDeviceGetCount");
  resolve(api.cuDeviceGet, "cuDeviceGet");
  resolve(api.cuDeviceGetName, "cuDeviceGetName");
  resolve(api.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
  resolve(api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  resolve(api.cuDeviceTotalMem, "cuDeviceTotalMem", "cuDeviceTotalMem_v2");
  resolve(api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2");
  resolve(api.cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2");
  resolve(api.cuCtxSetCurrent, "cuCtxSetCurrent");
  resolve(api.cuStreamCreate, "cuStreamCreate");
  resolve(api.cuStreamDestroy, "cuStreamDestroy", "cuStreamDestroy_v2");
  resolve(api.cuStreamSynchronize, "cuStreamSynchronize");
  resolve(api.cuModuleLoadData, "cuModuleLoadData");
  resolve(api.cuModuleUnload, "cuModuleUnload");
  resolve(api.cuModuleGetFunction, "cuModuleGetFunction");
  resolve(api.cuFuncSetAttribute, "cuFuncSetAttribute");
  resolve(api.cuLaunchKernel, "cuLaunchKernel");
  resolve(api.cuEventCreate, "cuEventCreate");
  resolve(api.cuEventRecord, "cuEventRecord");
  resolve(api.cuEventSynchronize, "cuEventSynchronize");
  resolve(api.cuEventElapsedTime, "cuEventElapsedTime");
  resolve(api.cuEventDestroy, "cuEventDestroy", "cuEventDestroy_v2");
  resolve(api.cuMemAlloc, "cuMemAlloc", "cuMemAlloc_v2");
  resolve(api.cuMemFree, "cuMemFree", "cuMemFree_v2");
  resolve(api.cuMemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2");
  resolve(api.cuMemcpyDtoH, "cuMemcpyDtoH", "cuMemcpyDtoH_v2");
  resolve(api.cuMemsetD8, "cuMemsetD8", "cuMemsetD8_v2");
  resolve(api.cuStreamBeginCapture, "cuStreamBeginCapture", "cuStreamBeginCapture_v2");
  resolve(api.cuStreamEndCapture, "cuStreamEndCapture");
  resolve(api.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  resolve(api.cuGraphLaunch, "cuGraphLaunch");
  resolve(api.cuGraphExecDestroy, "cuGraphExecDestroy");
  resolve(api.cuGraphDestroy, "cuGraphDestroy");
  resolve(api.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  resolve(api.cuTensorMapEncodeIm2col, "cuTensorMapEncodeIm2col");
  resolve(api.cuGetErrorName, "cuGetErrorName");
  resolve(api.cuGetErrorString, "cuGetErrorString");
}

// The codes optune reports, named and described as the driver does, for when there is no driver
// to ask (a stub's cuGetErrorName fails too).
struct KnownError {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr KnownError kKnownErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "operation not supported on global/shared address space"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

const KnownError* known_error(CUresult code) {
  for (const KnownError& known : kKnownErrors) {
    if (known.code == code) return &known;
  }
  return nullptr;
}

}  // namespace

DriverApi DriverApi::load(const std::string& name) {
  DriverApi api;
  SharedLibrary library = open_shared_library(name);
  if (!library.is_open()) {
    api.missing = fmt::format("no CUDA driver ({})", library.error);
    return api;
  }
  api.library = library.path;
  resolve_all(library, api);
  if (!api.cuInit) return api;
  // cuInit first: a stub of another release may lack a function, but it is a stub before all.
  api.init_result = api.cuInit(0);
  if (api.init_result == CUDA_ERROR_STUB_LIBRARY) {
    api.missing = fmt::format("{} is the CUDA toolkit's stub, not a driver ({})", name, library.path);
  } else if (!api.missing.empty()) {
    return api;
  } else if (api.init_result != CUDA_SUCCESS && api.init_result != CUDA_ERROR_NO_DEVICE) {
    api.missing = fmt::format("cuInit: {} ({})", error_text(api, api.init_result), library.path);
  }
  return api;
}

const DriverApi& DriverApi::get() {
  static const DriverApi api = load("libcuda.so.1");
  return api;
}

const DriverApi& DriverApi::require() {
  const DriverApi& api = get();
  if (!api.is_available()) throw std::runtime_error(api.missing);
  return api;
}

std::string error_text(CUresult code) { return error_text(DriverApi::get(), code); }

std::string error_text(const DriverApi& api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(code, &name) != CUDA_SUCCESS) name = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(code, &text) != CUDA_SUCCESS) text = nullptr;
  if (const KnownError* known = known_error(code); known && !name) {
    name = known->name;
    text = known->text;
  }
  if (!name) return fmt::format("CUDA error {}", code);
  if (!text) return name;
  return fmt::format("{}: {}", name, text);
}

CudaError::CudaError(const std::string& call, CUresult code)
    : std::runtime_error(fmt::format("{}: {}", call, error_text(code))), code_(code) {}

bool CudaError::is_sticky() const { return cuda::is_sticky(code_); }

bool is_sticky(CUresult code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
      return true;
    default:
      return false;
  }
}

}  // namespace optune::backends::cuda
