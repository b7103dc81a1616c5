// The part of the CUDA driver API (cuda.h) and NVRTC (nvrtc.h) that optune calls, declared here so
// that optune builds on machines without a CUDA toolkit: the libraries are loaded at run time
// (driver_api.hpp, nvrtc_api.hpp) and called through these prototypes. Values and signatures are
// copied from the CUDA 13.0 headers; tests/cuda_abi_test.cpp checks them against the real headers
// wherever a toolkit is installed. The names are CUDA's own, inside optune's namespace, so they
// never collide with cuda.h's globals.
#pragma once

#include <cstddef>
#include <cstdint>

namespace optune::backends::cuda {

// cuda.h's CUresult is an enum; on every ABI CUDA supports it is passed and returned as an int.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2: 64-bit device addresses
using cuuint64_t = std::uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUdevice_attribute = int;
using CUfunction_attribute = int;
using CUdriverProcAddressQueryResult = int;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;  // libcuda.so from the toolkit, not a driver
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
// Sticky errors (cuda.h: "the process in an inconsistent state and any further CUDA work will
// return the same error"): only a new process recovers; is_sticky() lists them.
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;  // not sticky: a bad launch
inline constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
inline constexpr CUresult CUDA_ERROR_ASSERT = 710;
inline constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;  // bytes
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;  // kHz
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;  // bytes
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
// Bytes of shared memory a kernel may use after cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES).
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr unsigned int CU_STREAM_DEFAULT = 0;
inline constexpr unsigned int CU_STREAM_NON_BLOCKING = 1;
// CUstreamCaptureMode: THREAD_LOCAL refuses only this thread's unsafe calls while it captures.
using CUstreamCaptureMode = int;
inline constexpr CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
inline constexpr unsigned int CU_EVENT_DEFAULT = 0;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
inline constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_SUCCESS = 0;

// The driver API version cuGetProcAddress is asked for: the 12.0 ABI of each function (the _v2
// variants with 64-bit sizes), which every driver since 12.0, 13.x included, provides.
inline constexpr int kDriverAbiVersion = 12000;

// Prototypes, named <function>_t (cudaTypedefs.h's PFN_<function> names are macros there).
using cuGetProcAddress_v2_t = CUresult (*)(const char* symbol, void** function, int cuda_version,
                                           cuuint64_t flags, CUdriverProcAddressQueryResult* status);
using cuInit_t = CUresult (*)(unsigned int flags);
using cuDriverGetVersion_t = CUresult (*)(int* version);
using cuDeviceGetCount_t = CUresult (*)(int* count);
using cuDeviceGet_t = CUresult (*)(CUdevice* device, int ordinal);
using cuDeviceGetName_t = CUresult (*)(char* name, int length, CUdevice device);
using cuDeviceGetPCIBusId_t = CUresult (*)(char* pci_bus_id, int length, CUdevice device);
using cuDeviceGetAttribute_t = CUresult (*)(int* value, CUdevice_attribute attribute, CUdevice device);
using cuDeviceTotalMem_t = CUresult (*)(std::size_t* bytes, CUdevice device);
using cuDevicePrimaryCtxRetain_t = CUresult (*)(CUcontext* context, CUdevice device);
using cuDevicePrimaryCtxRelease_t = CUresult (*)(CUdevice device);
using cuDevicePrimaryCtxReset_t = CUresult (*)(CUdevice device);
using cuCtxSetCurrent_t = CUresult (*)(CUcontext context);
using cuStreamCreate_t = CUresult (*)(CUstream* stream, unsigned int flags);
using cuStreamDestroy_t = CUresult (*)(CUstream stream);
using cuStreamSynchronize_t = CUresult (*)(CUstream stream);
using cuModuleLoadData_t = CUresult (*)(CUmodule* module, const void* image);
using cuModuleUnload_t = CUresult (*)(CUmodule module);
using cuModuleGetFunction_t = CUresult (*)(CUfunction* function, CUmodule module, const char* name);
using cuFuncSetAttribute_t = CUresult (*)(CUfunction function, CUfunction_attribute attribute, int value);
using cuLaunchKernel_t = CUresult (*)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                                      unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                      unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                                      void** parameters, void** extra);
using cuEventCreate_t = CUresult (*)(CUevent* event, unsigned int flags);
using cuEventRecord_t = CUresult (*)(CUevent event, CUstream stream);
using cuEventSynchronize_t = CUresult (*)(CUevent event);
using cuEventElapsedTime_t = CUresult (*)(float* milliseconds, CUevent start, CUevent end);
using cuEventDestroy_t = CUresult (*)(CUevent event);
using cuMemAlloc_t = CUresult (*)(CUdeviceptr* pointer, std::size_t bytes);
using cuMemFree_t = CUresult (*)(CUdeviceptr pointer);
using cuMemcpyHtoD_t = CUresult (*)(CUdeviceptr destination, const void* source, std::size_t bytes);
using cuMemcpyDtoH_t = CUresult (*)(void* destination, CUdeviceptr source, std::size_t bytes);
using cuMemsetD8_t = CUresult (*)(CUdeviceptr destination, unsigned char value, std::size_t count);
using cuStreamBeginCapture_t = CUresult (*)(CUstream stream, CUstreamCaptureMode mode);
using cuStreamEndCapture_t = CUresult (*)(CUstream stream, CUgraph* graph);
using cuGraphInstantiateWithFlags_t = CUresult (*)(CUgraphExec* executable, CUgraph graph, unsigned long long flags);
using cuGraphLaunch_t = CUresult (*)(CUgraphExec executable, CUstream stream);
using cuGraphExecDestroy_t = CUresult (*)(CUgraphExec executable);
using cuGraphDestroy_t = CUresult (*)(CUgraph graph);
// A TMA descriptor (cuda.h's CUtensorMap): 128 opaque bytes, 128-byte aligned as CUDA 13 has it
// (the kernel parameter needs 64).
struct alignas(128) CUtensorMap {
  std::uint64_t opaque[16];
};
using cuuint32_t = std::uint32_t;
using CUtensorMapDataType = int;
using CUtensorMapInterleave = int;
using CUtensorMapSwizzle = int;
using CUtensorMapL2promotion = int;
using CUtensorMapFloatOOBfill = int;
inline constexpr CUtensorMapDataType CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0;
inline constexpr CUtensorMapDataType CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
inline constexpr CUtensorMapDataType CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7;
inline constexpr CUtensorMapDataType CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
inline constexpr CUtensorMapInterleave CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
inline constexpr CUtensorMapSwizzle CU_TENSOR_MAP_SWIZZLE_NONE = 0;
inline constexpr CUtensorMapSwizzle CU_TENSOR_MAP_SWIZZLE_128B = 3;
inline constexpr CUtensorMapL2promotion CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3;
inline constexpr CUtensorMapFloatOOBfill CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;  // out of bounds reads zeros
using cuTensorMapEncodeTiled_t = CUresult (*)(CUtensorMap* map, CUtensorMapDataType data_type, cuuint32_t rank,
                                              void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                              const cuuint32_t* box, const cuuint32_t* element_strides,
                                              CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                              CUtensorMapL2promotion promotion, CUtensorMapFloatOOBfill fill);
using cuTensorMapEncodeIm2col_t = CUresult (*)(CUtensorMap* map, CUtensorMapDataType data_type, cuuint32_t rank,
                                               void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                               const int* lower_corner, const int* upper_corner,
                                               cuuint32_t channels_per_pixel, cuuint32_t pixels_per_column,
                                               const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                               CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
                                               CUtensorMapFloatOOBfill fill);
using cuGetErrorName_t = CUresult (*)(CUresult error, const char** name);
using cuGetErrorString_t = CUresult (*)(CUresult error, const char** text);

// NVRTC.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
inline constexpr nvrtcResult NVRTC_SUCCESS = 0;
inline constexpr nvrtcResult NVRTC_ERROR_INVALID_OPTION = 5;
inline constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;
inline constexpr nvrtcResult NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID = 10;

using nvrtcVersion_t = nvrtcResult (*)(int* major, int* minor);
using nvrtcGetErrorString_t = const char* (*)(nvrtcResult result);
using nvrtcCreateProgram_t = nvrtcResult (*)(nvrtcProgram* program, const char* source, const char* name,
                                             int header_count, const char* const* headers,
                                             const char* const* include_names);
using nvrtcDestroyProgram_t = nvrtcResult (*)(nvrtcProgram* program);
using nvrtcAddNameExpression_t = nvrtcResult (*)(nvrtcProgram program, const char* const name_expression);
using nvrtcCompileProgram_t = nvrtcResult (*)(nvrtcProgram program, int option_count, const char* const* options);
using nvrtcGetProgramLogSize_t = nvrtcResult (*)(nvrtcProgram program, std::size_t* bytes);
using nvrtcGetProgramLog_t = nvrtcResult (*)(nvrtcProgram program, char* log);
using nvrtcGetCUBINSize_t = nvrtcResult (*)(nvrtcProgram program, std::size_t* bytes);
using nvrtcGetCUBIN_t = nvrtcResult (*)(nvrtcProgram program, char* cubin);
using nvrtcGetPTXSize_t = nvrtcResult (*)(nvrtcProgram program, std::size_t* bytes);
using nvrtcGetPTX_t = nvrtcResult (*)(nvrtcProgram program, char* ptx);
using nvrtcGetLoweredName_t = nvrtcResult (*)(nvrtcProgram program, const char* const name_expression,
                                              const char** lowered_name);
using nvrtcGetNumSupportedArchs_t = nvrtcResult (*)(int* count);
using nvrtcGetSupportedArchs_t = nvrtcResult (*)(int* archs);

}  // namespace optune::backends::cuda
