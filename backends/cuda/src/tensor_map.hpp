// A TMA descriptor one of a kernel's buffer arguments needs: a template asks for it (which buffer,
// its element type, dimensions and strides, the box one copy brings, the swizzle), the artifact
// carries it, and the worker encodes it (cuTensorMapEncodeTiled, or cuTensorMapEncodeIm2col for an
// im2col view) with the buffer's device address and passes it by value after the kernel's
// arguments, in the order asked. The kernel declares each as `const __grid_constant__` 128-byte
// parameter. Out-of-bounds reads of a box give zeros.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda_abi.hpp"
#include "optune/kernels/data_type.hpp"

namespace optune::backends::cuda {

// cuTensorMapEncodeIm2col's limits that a template checks before asking for a map: the traversal
// strides (1 to 8), and a rank-4 map's bounding-box corners (within [-128, 127]).
inline constexpr std::uint32_t kMaxTraversalStride = 8;
inline constexpr int kMaxIm2colCorner = 127;

struct TensorMapArgument {
  std::size_t buffer = 0;                    // the argument it describes (a buffer)
  int data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;  // CUtensorMapDataType
  std::vector<std::uint64_t> dims;           // elements per dimension, innermost first (rank 1-5)
  std::vector<std::uint64_t> strides_bytes;  // bytes from one index of dimension d + 1 to the next
  std::vector<std::uint32_t> box;            // elements one copy brings, per dimension (tiled only)
  int swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;  // CUtensorMapSwizzle
  // The im2col view of a channels-last activation (dims C, W, H, N innermost first): a copy brings
  // `pixels_per_column` pixels, walked W then H then N over the bounding box with the traversal
  // strides, `channels_per_pixel` channels each, at the filter offsets the copy names.
  struct Im2col {
    std::vector<int> lower_corner;  // the bounding box's corners in W, H: -pad ...
    std::vector<int> upper_corner;  // ... and pad - (S - 1) dilation, pad - (R - 1) dilation
    std::uint32_t channels_per_pixel = 0;
    std::uint32_t pixels_per_column = 0;
  };
  std::optional<Im2col> im2col;               // empty: a tiled map
  std::vector<std::uint32_t> element_strides;  // the traversal stride per dimension; empty: all 1
};

// The map of a row-major matrix of `rows` x `columns` elements of `dtype` (fp8 as bytes) whose box
// is `box_columns` x `box_rows`, in `swizzle`.
TensorMapArgument matrix_map(std::size_t buffer, kernels::DataType dtype, std::int64_t rows, std::int64_t columns,
                             std::int64_t box_rows, std::int64_t box_columns, int swizzle);

// The im2col view of an N x H x W x C tensor for a convolution of an R x S filter (stride, pad,
// dilation): copies of `pixels` output pixels by `channels` channels (the 128-byte swizzle).
TensorMapArgument im2col_map(std::size_t buffer, kernels::DataType dtype, std::int64_t n, std::int64_t h,
                             std::int64_t w, std::int64_t c, std::int64_t r, std::int64_t s, std::int64_t stride,
                             std::int64_t pad, std::int64_t dilation, std::int64_t pixels, std::int64_t channels);

nlohmann::json tensor_map_json(const TensorMapArgument& argument);
// Throws std::runtime_error naming what is malformed (a damaged or hostile artifact).
TensorMapArgument tensor_map_of(const nlohmann::json& json);

// Throws CudaError when the driver refuses the description (an address or stride not 16-byte
// aligned, a box the swizzle cannot hold).
CUtensorMap encode_tensor_map(const TensorMapArgument& argument, CUdeviceptr address);

}  // namespace optune::backends::cuda
