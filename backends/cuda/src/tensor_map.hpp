// A TMA descriptor one of a kernel's buffer arguments needs: a template asks for it (which buffer,
// its element type, dimensions and strides, the box one copy brings, the swizzle), the artifact
// carries it, and the worker encodes it (cuTensorMapEncodeTiled) with the buffer's device address
// and passes it by value after the kernel's arguments, in the order asked. The kernel declares each
// as `const __grid_constant__` 128-byte parameter. Out-of-bounds reads of a box give zeros.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda_abi.hpp"
#include "optune/kernels/data_type.hpp"

namespace optune::backends::cuda {

struct TensorMapArgument {
  std::size_t buffer = 0;                    // the argument it describes (a buffer)
  int data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;  // CUtensorMapDataType
  std::vector<std::uint64_t> dims;           // elements per dimension, innermost first (rank 1-5)
  std::vector<std::uint64_t> strides_bytes;  // bytes from one index of dimension d + 1 to the next
  std::vector<std::uint32_t> box;            // elements one copy brings, per dimension
  int swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;  // CUtensorMapSwizzle
};

// The map of a row-major matrix of `rows` x `columns` elements of `dtype` (fp8 as bytes) whose box
// is `box_columns` x `box_rows`, in `swizzle`.
TensorMapArgument matrix_map(std::size_t buffer, kernels::DataType dtype, std::int64_t rows, std::int64_t columns,
                             std::int64_t box_rows, std::int64_t box_columns, int swizzle);

nlohmann::json tensor_map_json(const TensorMapArgument& argument);
// Throws std::runtime_error naming what is malformed (a damaged or hostile artifact).
TensorMapArgument tensor_map_of(const nlohmann::json& json);

// Throws CudaError when the driver refuses the description (an address or stride not 16-byte
// aligned, a box the swizzle cannot hold).
CUtensorMap encode_tensor_map(const TensorMapArgument& argument, CUdeviceptr address);

}  // namespace optune::backends::cuda
