// cuda_abi.hpp against the toolkit's own headers: every constant optune declares equals cuda.h's or
// nvrtc.h's, and every prototype has the shape of the real one (same arity; each parameter the same
// size and kind, enums standing for ints and any opaque struct for another). Built only where
// CMake finds cuda.h; the checks are at compile time, the test body only records that they ran.
#include "cuda_abi.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <nvrtc.h>

#include <type_traits>

#include <gtest/gtest.h>

namespace {

namespace ours = optune::backends::cuda;

template <typename A, typename B>
constexpr bool same_shape() {
  using X = std::remove_cv_t<A>;
  using Y = std::remove_cv_t<B>;
  if constexpr (std::is_pointer_v<X> || std::is_pointer_v<Y>) {
    if constexpr (std::is_pointer_v<X> && std::is_pointer_v<Y>) {
      using PX = std::remove_pointer_t<X>;
      using PY = std::remove_pointer_t<Y>;
      return std::is_const_v<PX> == std::is_const_v<PY> && same_shape<PX, PY>();
    } else {
      return false;
    }
  } else if constexpr (std::is_class_v<X> || std::is_class_v<Y>) {
    return std::is_class_v<X> && std::is_class_v<Y>;  // opaque handles: CUctx_st, _nvrtcProgram
  } else if constexpr (std::is_void_v<X> || std::is_void_v<Y>) {
    return std::is_void_v<X> && std::is_void_v<Y>;
  } else {
    return sizeof(X) == sizeof(Y) && std::is_floating_point_v<X> == std::is_floating_point_v<Y>;
  }
}

template <typename F, typename G>
struct SameSignature : std::false_type {};
template <typename R1, typename... A1, typename R2, typename... A2>
struct SameSignature<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool value = [] {
    if constexpr (sizeof...(A1) != sizeof...(A2)) {
      return false;
    } else {
      return same_shape<R1, R2>() && (same_shape<A1, A2>() && ...);
    }
  }();
};
template <typename F, typename G>
constexpr bool same_signature = SameSignature<F, G>::value;

// Types.
static_assert(sizeof(ours::CUresult) == sizeof(::CUresult));
static_assert(std::is_same_v<ours::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<ours::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<ours::cuuint64_t, ::cuuint64_t>);
static_assert(sizeof(ours::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(ours::CUfunction_attribute) == sizeof(::CUfunction_attribute));
static_assert(sizeof(ours::CUstreamCaptureMode) == sizeof(::CUstreamCaptureMode));
static_assert(ours::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL == ::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
static_assert(sizeof(ours::CUdriverProcAddressQueryResult) == sizeof(::CUdriverProcAddressQueryResult));
static_assert(sizeof(ours::nvrtcResult) == sizeof(::nvrtcResult));
static_assert(ours::kDriverAbiVersion <= CUDA_VERSION);

// Error codes.
static_assert(ours::CUDA_SUCCESS == ::CUDA_SUCCESS);
static_assert(ours::CUDA_ERROR_INVALID_VALUE == ::CUDA_ERROR_INVALID_VALUE);
static_assert(ours::CUDA_ERROR_OUT_OF_MEMORY == ::CUDA_ERROR_OUT_OF_MEMORY);
static_assert(ours::CUDA_ERROR_NOT_INITIALIZED == ::CUDA_ERROR_NOT_INITIALIZED);
static_assert(ours::CUDA_ERROR_STUB_LIBRARY == ::CUDA_ERROR_STUB_LIBRARY);
static_assert(ours::CUDA_ERROR_NO_DEVICE == ::CUDA_ERROR_NO_DEVICE);
static_assert(ours::CUDA_ERROR_INVALID_IMAGE == ::CUDA_ERROR_INVALID_IMAGE);
static_assert(ours::CUDA_ERROR_NO_BINARY_FOR_GPU == ::CUDA_ERROR_NO_BINARY_FOR_GPU);
static_assert(ours::CUDA_ERROR_INVALID_PTX == ::CUDA_ERROR_INVALID_PTX);
static_assert(ours::CUDA_ERROR_UNSUPPORTED_PTX_VERSION == ::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
static_assert(ours::CUDA_ERROR_NOT_FOUND == ::CUDA_ERROR_NOT_FOUND);
static_assert(ours::CUDA_ERROR_ILLEGAL_ADDRESS == ::CUDA_ERROR_ILLEGAL_ADDRESS);
static_assert(ours::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES == ::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
static_assert(ours::CUDA_ERROR_LAUNCH_TIMEOUT == ::CUDA_ERROR_LAUNCH_TIMEOUT);
static_assert(ours::CUDA_ERROR_ASSERT == ::CUDA_ERROR_ASSERT);
static_assert(ours::CUDA_ERROR_HARDWARE_STACK_ERROR == ::CUDA_ERROR_HARDWARE_STACK_ERROR);
static_assert(ours::CUDA_ERROR_ILLEGAL_INSTRUCTION == ::CUDA_ERROR_ILLEGAL_INSTRUCTION);
static_assert(ours::CUDA_ERROR_MISALIGNED_ADDRESS == ::CUDA_ERROR_MISALIGNED_ADDRESS);
static_assert(ours::CUDA_ERROR_INVALID_ADDRESS_SPACE == ::CUDA_ERROR_INVALID_ADDRESS_SPACE);
static_assert(ours::CUDA_ERROR_INVALID_PC == ::CUDA_ERROR_INVALID_PC);
static_assert(ours::CUDA_ERROR_LAUNCH_FAILED == ::CUDA_ERROR_LAUNCH_FAILED);

// Attributes and flags.
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK == ::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X == ::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y == ::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z == ::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X == ::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y == ::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z == ::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK ==
              ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
static_assert(ours::CU_DEVICE_ATTRIBUTE_WARP_SIZE == ::CU_DEVICE_ATTRIBUTE_WARP_SIZE);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK == ::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
static_assert(ours::CU_DEVICE_ATTRIBUTE_CLOCK_RATE == ::CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(ours::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE == ::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
static_assert(ours::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(ours::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(ours::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ==
              ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
static_assert(ours::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES == ::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(sizeof(ours::CUtensorMap) == sizeof(::CUtensorMap) && alignof(ours::CUtensorMap) == alignof(::CUtensorMap));
static_assert(ours::CU_TENSOR_MAP_DATA_TYPE_UINT8 == ::CU_TENSOR_MAP_DATA_TYPE_UINT8);
static_assert(ours::CU_TENSOR_MAP_DATA_TYPE_FLOAT16 == ::CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
static_assert(ours::CU_TENSOR_MAP_DATA_TYPE_FLOAT32 == ::CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
static_assert(ours::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 == ::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
static_assert(ours::CU_TENSOR_MAP_INTERLEAVE_NONE == ::CU_TENSOR_MAP_INTERLEAVE_NONE);
static_assert(ours::CU_TENSOR_MAP_SWIZZLE_NONE == ::CU_TENSOR_MAP_SWIZZLE_NONE);
static_assert(ours::CU_TENSOR_MAP_SWIZZLE_128B == ::CU_TENSOR_MAP_SWIZZLE_128B);
static_assert(ours::CU_TENSOR_MAP_L2_PROMOTION_L2_256B == ::CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
static_assert(ours::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE == ::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
static_assert(ours::CU_STREAM_DEFAULT == ::CU_STREAM_DEFAULT);
static_assert(ours::CU_STREAM_NON_BLOCKING == ::CU_STREAM_NON_BLOCKING);
static_assert(ours::CU_EVENT_DEFAULT == ::CU_EVENT_DEFAULT);
static_assert(ours::CU_GET_PROC_ADDRESS_DEFAULT == ::CU_GET_PROC_ADDRESS_DEFAULT);
static_assert(ours::CU_GET_PROC_ADDRESS_SUCCESS == ::CU_GET_PROC_ADDRESS_SUCCESS);
static_assert(ours::NVRTC_SUCCESS == ::NVRTC_SUCCESS);
static_assert(ours::NVRTC_ERROR_INVALID_OPTION == ::NVRTC_ERROR_INVALID_OPTION);
static_assert(ours::NVRTC_ERROR_COMPILATION == ::NVRTC_ERROR_COMPILATION);
static_assert(ours::NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID == ::NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID);

// Driver prototypes against cudaTypedefs.h, at the 12.0 ABI cuGetProcAddress is asked for.
static_assert(same_signature<ours::cuGetProcAddress_v2_t, PFN_cuGetProcAddress_v12000>);
static_assert(same_signature<ours::cuInit_t, PFN_cuInit_v2000>);
static_assert(same_signature<ours::cuDriverGetVersion_t, PFN_cuDriverGetVersion_v2020>);
static_assert(same_signature<ours::cuDeviceGetCount_t, PFN_cuDeviceGetCount_v2000>);
static_assert(same_signature<ours::cuDeviceGet_t, PFN_cuDeviceGet_v2000>);
static_assert(same_signature<ours::cuDeviceGetName_t, PFN_cuDeviceGetName_v2000>);
static_assert(same_signature<ours::cuDeviceGetAttribute_t, PFN_cuDeviceGetAttribute_v2000>);
static_assert(same_signature<ours::cuDeviceTotalMem_t, PFN_cuDeviceTotalMem_v3020>);
static_assert(same_signature<ours::cuDevicePrimaryCtxRetain_t, PFN_cuDevicePrimaryCtxRetain_v7000>);
static_assert(same_signature<ours::cuDevicePrimaryCtxRelease_t, PFN_cuDevicePrimaryCtxRelease_v11000>);
static_assert(same_signature<ours::cuDevicePrimaryCtxReset_t, PFN_cuDevicePrimaryCtxReset_v11000>);
static_assert(same_signature<ours::cuCtxSetCurrent_t, PFN_cuCtxSetCurrent_v4000>);
static_assert(same_signature<ours::cuStreamCreate_t, PFN_cuStreamCreate_v2000>);
static_assert(same_signature<ours::cuStreamDestroy_t, PFN_cuStreamDestroy_v4000>);
static_assert(same_signature<ours::cuStreamSynchronize_t, PFN_cuStreamSynchronize_v2000>);
static_assert(same_signature<ours::cuModuleLoadData_t, PFN_cuModuleLoadData_v2000>);
static_assert(same_signature<ours::cuModuleUnload_t, PFN_cuModuleUnload_v2000>);
static_assert(same_signature<ours::cuModuleGetFunction_t, PFN_cuModuleGetFunction_v2000>);
static_assert(same_signature<ours::cuFuncSetAttribute_t, PFN_cuFuncSetAttribute_v9000>);
static_assert(same_signature<ours::cuLaunchKernel_t, PFN_cuLaunchKernel_v4000>);
static_assert(same_signature<ours::cuEventCreate_t, PFN_cuEventCreate_v2000>);
static_assert(same_signature<ours::cuEventRecord_t, PFN_cuEventRecord_v2000>);
static_assert(same_signature<ours::cuEventSynchronize_t, PFN_cuEventSynchronize_v2000>);
static_assert(same_signature<ours::cuEventElapsedTime_t, PFN_cuEventElapsedTime_v2000>);
static_assert(same_signature<ours::cuEventDestroy_t, PFN_cuEventDestroy_v4000>);
static_assert(same_signature<ours::cuMemAlloc_t, PFN_cuMemAlloc_v3020>);
static_assert(same_signature<ours::cuMemFree_t, PFN_cuMemFree_v3020>);
static_assert(same_signature<ours::cuMemcpyHtoD_t, PFN_cuMemcpyHtoD_v3020>);
static_assert(same_signature<ours::cuMemcpyDtoH_t, PFN_cuMemcpyDtoH_v3020>);
static_assert(same_signature<ours::cuMemsetD8_t, PFN_cuMemsetD8_v3020>);
static_assert(same_signature<ours::cuStreamBeginCapture_t, PFN_cuStreamBeginCapture_v10010>);
static_assert(same_signature<ours::cuStreamEndCapture_t, PFN_cuStreamEndCapture_v10000>);
static_assert(same_signature<ours::cuGraphInstantiateWithFlags_t, PFN_cuGraphInstantiateWithFlags_v11040>);
static_assert(same_signature<ours::cuGraphLaunch_t, PFN_cuGraphLaunch_v10000>);
static_assert(same_signature<ours::cuGraphExecDestroy_t, PFN_cuGraphExecDestroy_v10000>);
static_assert(same_signature<ours::cuGraphDestroy_t, PFN_cuGraphDestroy_v10000>);
static_assert(same_signature<ours::cuTensorMapEncodeTiled_t, PFN_cuTensorMapEncodeTiled_v12000>);
static_assert(same_signature<ours::cuTensorMapEncodeIm2col_t, PFN_cuTensorMapEncodeIm2col_v12000>);
static_assert(same_signature<ours::cuGetErrorName_t, PFN_cuGetErrorName_v6000>);
static_assert(same_signature<ours::cuGetErrorString_t, PFN_cuGetErrorString_v6000>);
// The shape check itself tells a 32-bit size from a 64-bit one (the _v2 variants' difference).
static_assert(!same_signature<ours::cuMemAlloc_t, ::CUresult (*)(unsigned int*, unsigned int)>);  // cuMemAlloc v1

// NVRTC prototypes against nvrtc.h's declarations (it has no typedef header).
static_assert(same_signature<ours::nvrtcVersion_t, decltype(&::nvrtcVersion)>);
static_assert(same_signature<ours::nvrtcGetErrorString_t, decltype(&::nvrtcGetErrorString)>);
static_assert(same_signature<ours::nvrtcCreateProgram_t, decltype(&::nvrtcCreateProgram)>);
static_assert(same_signature<ours::nvrtcDestroyProgram_t, decltype(&::nvrtcDestroyProgram)>);
static_assert(same_signature<ours::nvrtcAddNameExpression_t, decltype(&::nvrtcAddNameExpression)>);
static_assert(same_signature<ours::nvrtcCompileProgram_t, decltype(&::nvrtcCompileProgram)>);
static_assert(same_signature<ours::nvrtcGetProgramLogSize_t, decltype(&::nvrtcGetProgramLogSize)>);
static_assert(same_signature<ours::nvrtcGetProgramLog_t, decltype(&::nvrtcGetProgramLog)>);
static_assert(same_signature<ours::nvrtcGetCUBINSize_t, decltype(&::nvrtcGetCUBINSize)>);
static_assert(same_signature<ours::nvrtcGetCUBIN_t, decltype(&::nvrtcGetCUBIN)>);
static_assert(same_signature<ours::nvrtcGetPTXSize_t, decltype(&::nvrtcGetPTXSize)>);
static_assert(same_signature<ours::nvrtcGetPTX_t, decltype(&::nvrtcGetPTX)>);
static_assert(same_signature<ours::nvrtcGetLoweredName_t, decltype(&::nvrtcGetLoweredName)>);
static_assert(same_signature<ours::nvrtcGetNumSupportedArchs_t, decltype(&::nvrtcGetNumSupportedArchs)>);
static_assert(same_signature<ours::nvrtcGetSupportedArchs_t, decltype(&::nvrtcGetSupportedArchs)>);

TEST(CudaAbi, DeclarationsMatchTheToolkitHeaders) {
  SUCCEED() << "checked at compile time against CUDA " << CUDA_VERSION;
}

}  // namespace
