#include "tensor_map.hpp"

#include <stdexcept>
#include <string>

#include "driver_api.hpp"

namespace optune::backends::cuda {
namespace {

// cuTensorMapEncodeTiled's limits: rank 1 to 5, box sides 1 to 256, data types 0 to 15.
constexpr std::size_t kMaxRank = 5;
constexpr std::uint32_t kMaxBoxSide = 256;
constexpr int kLastDataType = 15;
constexpr int kLastSwizzle = 6;

}  // namespace

TensorMapArgument matrix_map(std::size_t buffer, kernels::DataType dtype, std::int64_t rows, std::int64_t columns,
                             std::int64_t box_rows, std::int64_t box_columns, int swizzle) {
  TensorMapArgument map;
  map.buffer = buffer;
  switch (dtype) {
    case kernels::DataType::kF16: map.data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
    case kernels::DataType::kBF16: map.data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
    case kernels::DataType::kF32: map.data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
    case kernels::DataType::kE4M3: map.data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8; break;
    default: throw std::invalid_argument("no tensor map element type for " + std::string(kernels::data_type_name(dtype)));
  }
  map.dims = {std::uint64_t(columns), std::uint64_t(rows)};
  map.strides_bytes = {std::uint64_t(columns) * kernels::data_type_bytes(dtype)};
  map.box = {std::uint32_t(box_columns), std::uint32_t(box_rows)};
  map.swizzle = swizzle;
  return map;
}

nlohmann::json tensor_map_json(const TensorMapArgument& argument) {
  return {{"buffer", argument.buffer}, {"data_type", argument.data_type},      {"dims", argument.dims},
          {"strides_bytes", argument.strides_bytes}, {"box", argument.box}, {"swizzle", argument.swizzle}};
}

TensorMapArgument tensor_map_of(const nlohmann::json& json) {
  TensorMapArgument argument;
  argument.buffer = json.at("buffer").get<std::size_t>();
  argument.data_type = json.at("data_type").get<int>();
  argument.dims = json.at("dims").get<std::vector<std::uint64_t>>();
  argument.strides_bytes = json.at("strides_bytes").get<std::vector<std::uint64_t>>();
  argument.box = json.at("box").get<std::vector<std::uint32_t>>();
  argument.swizzle = json.at("swizzle").get<int>();
  const std::size_t rank = argument.dims.size();
  if (rank < 1 || rank > kMaxRank) throw std::runtime_error("a tensor map has 1 to 5 dimensions");
  if (argument.strides_bytes.size() != rank - 1 || argument.box.size() != rank)
    throw std::runtime_error("a tensor map needs rank - 1 strides and a box side per dimension");
  for (std::size_t d = 0; d < rank; ++d)
    if (argument.dims[d] == 0 || argument.box[d] == 0 || argument.box[d] > kMaxBoxSide)
      throw std::runtime_error("tensor map dimensions must be positive and box sides 1 to 256");
  if (argument.data_type < 0 || argument.data_type > kLastDataType || argument.swizzle < 0 ||
      argument.swizzle > kLastSwizzle)
    throw std::runtime_error("unknown tensor map data type or swizzle");
  return argument;
}

CUtensorMap encode_tensor_map(const TensorMapArgument& argument, CUdeviceptr address) {
  CUtensorMap map{};
  const std::vector<cuuint32_t> element_strides(argument.dims.size(), 1);
  check(DriverApi::get().cuTensorMapEncodeTiled(
            &map, argument.data_type, static_cast<cuuint32_t>(argument.dims.size()), reinterpret_cast<void*>(address),
            argument.dims.data(), argument.strides_bytes.data(), argument.box.data(), element_strides.data(),
            CU_TENSOR_MAP_INTERLEAVE_NONE, argument.swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled");
  return map;
}

}  // namespace optune::backends::cuda
