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

// cuTensorMapEncodeIm2col's besides (tensor_map.hpp): rank 3 to 5, at most 256 channels and 1024
// pixels a copy.
constexpr std::size_t kMinIm2colRank = 3;
constexpr std::uint32_t kMaxChannelsPerPixel = 256;
constexpr std::uint32_t kMaxPixelsPerColumn = 1024;

CUtensorMapDataType tensor_map_data_type(kernels::DataType dtype) {
  switch (dtype) {
    case kernels::DataType::kF16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case kernels::DataType::kBF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case kernels::DataType::kF32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case kernels::DataType::kE4M3: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    default: throw std::invalid_argument("no tensor map element type for " + std::string(kernels::data_type_name(dtype)));
  }
}

}  // namespace

TensorMapArgument matrix_map(std::size_t buffer, kernels::DataType dtype, std::int64_t rows, std::int64_t columns,
                             std::int64_t box_rows, std::int64_t box_columns, int swizzle) {
  TensorMapArgument map;
  map.buffer = buffer;
  map.data_type = tensor_map_data_type(dtype);
  map.dims = {std::uint64_t(columns), std::uint64_t(rows)};
  map.strides_bytes = {std::uint64_t(columns) * kernels::data_type_bytes(dtype)};
  map.box = {std::uint32_t(box_columns), std::uint32_t(box_rows)};
  map.swizzle = swizzle;
  return map;
}

TensorMapArgument im2col_map(std::size_t buffer, kernels::DataType dtype, std::int64_t n, std::int64_t h,
                             std::int64_t w, std::int64_t c, std::int64_t r, std::int64_t s, std::int64_t stride,
                             std::int64_t pad, std::int64_t dilation, std::int64_t pixels, std::int64_t channels) {
  const std::uint64_t bytes = kernels::data_type_bytes(dtype);
  TensorMapArgument map;
  map.buffer = buffer;
  map.data_type = tensor_map_data_type(dtype);
  map.dims = {std::uint64_t(c), std::uint64_t(w), std::uint64_t(h), std::uint64_t(n)};
  map.strides_bytes = {std::uint64_t(c) * bytes, std::uint64_t(w * c) * bytes, std::uint64_t(h * w * c) * bytes};
  map.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  map.im2col = TensorMapArgument::Im2col{{int(-pad), int(-pad)},
                                         {int(pad - (s - 1) * dilation), int(pad - (r - 1) * dilation)},
                                         std::uint32_t(channels), std::uint32_t(pixels)};
  map.element_strides = {1, std::uint32_t(stride), std::uint32_t(stride), 1};
  return map;
}

nlohmann::json tensor_map_json(const TensorMapArgument& argument) {
  nlohmann::json json = {{"buffer", argument.buffer},
                         {"data_type", argument.data_type},
                         {"dims", argument.dims},
                         {"strides_bytes", argument.strides_bytes},
                         {"box", argument.box},
                         {"swizzle", argument.swizzle}};
  if (!argument.element_strides.empty()) json["element_strides"] = argument.element_strides;
  if (argument.im2col) {
    json["im2col"] = {{"lower_corner", argument.im2col->lower_corner},
                      {"upper_corner", argument.im2col->upper_corner},
                      {"channels_per_pixel", argument.im2col->channels_per_pixel},
                      {"pixels_per_column", argument.im2col->pixels_per_column}};
  }
  return json;
}

TensorMapArgument tensor_map_of(const nlohmann::json& json) {
  TensorMapArgument argument;
  argument.buffer = json.at("buffer").get<std::size_t>();
  argument.data_type = json.at("data_type").get<int>();
  argument.dims = json.at("dims").get<std::vector<std::uint64_t>>();
  argument.strides_bytes = json.at("strides_bytes").get<std::vector<std::uint64_t>>();
  argument.box = json.at("box").get<std::vector<std::uint32_t>>();
  argument.swizzle = json.at("swizzle").get<int>();
  argument.element_strides = json.value("element_strides", std::vector<std::uint32_t>{});
  if (json.contains("im2col")) {
    const nlohmann::json& im2col = json.at("im2col");
    argument.im2col = TensorMapArgument::Im2col{im2col.at("lower_corner").get<std::vector<int>>(),
                                                im2col.at("upper_corner").get<std::vector<int>>(),
                                                im2col.at("channels_per_pixel").get<std::uint32_t>(),
                                                im2col.at("pixels_per_column").get<std::uint32_t>()};
  }
  const std::size_t rank = argument.dims.size();
  if (rank < 1 || rank > kMaxRank) throw std::runtime_error("a tensor map has 1 to 5 dimensions");
  if (argument.strides_bytes.size() != rank - 1)
    throw std::runtime_error("a tensor map needs rank - 1 strides");
  for (std::size_t d = 0; d < rank; ++d)
    if (argument.dims[d] == 0) throw std::runtime_error("tensor map dimensions must be positive");
  if (!argument.element_strides.empty()) {
    if (argument.element_strides.size() != rank) throw std::runtime_error("a tensor map needs a stride per dimension");
    for (std::uint32_t stride : argument.element_strides)
      if (stride == 0 || stride > kMaxTraversalStride) throw std::runtime_error("tensor map strides must be 1 to 8");
  }
  if (argument.im2col) {
    const auto& im2col = *argument.im2col;
    if (rank < kMinIm2colRank) throw std::runtime_error("an im2col tensor map has 3 to 5 dimensions");
    if (im2col.lower_corner.size() != rank - 2 || im2col.upper_corner.size() != rank - 2)
      throw std::runtime_error("an im2col tensor map needs a corner per spatial dimension");
    for (const auto* corner : {&im2col.lower_corner, &im2col.upper_corner})
      for (int offset : *corner)
        if (offset < -kMaxIm2colCorner - 1 || offset > kMaxIm2colCorner)
          throw std::runtime_error("im2col corners must be within [-128, 127]");
    if (im2col.channels_per_pixel == 0 || im2col.channels_per_pixel > kMaxChannelsPerPixel ||
        im2col.pixels_per_column == 0 || im2col.pixels_per_column > kMaxPixelsPerColumn)
      throw std::runtime_error("an im2col copy brings 1 to 256 channels of 1 to 1024 pixels");
  } else {
    if (argument.box.size() != rank) throw std::runtime_error("a tensor map needs a box side per dimension");
    for (std::uint32_t side : argument.box)
      if (side == 0 || side > kMaxBoxSide) throw std::runtime_error("tensor map box sides must be 1 to 256");
  }
  if (argument.data_type < 0 || argument.data_type > kLastDataType || argument.swizzle < 0 ||
      argument.swizzle > kLastSwizzle)
    throw std::runtime_error("unknown tensor map data type or swizzle");
  return argument;
}

CUtensorMap encode_tensor_map(const TensorMapArgument& argument, CUdeviceptr address) {
  CUtensorMap map{};
  const std::vector<cuuint32_t> element_strides = argument.element_strides.empty()
                                                      ? std::vector<cuuint32_t>(argument.dims.size(), 1)
                                                      : argument.element_strides;
  if (argument.im2col) {
    const auto& im2col = *argument.im2col;
    check(DriverApi::get().cuTensorMapEncodeIm2col(
              &map, argument.data_type, static_cast<cuuint32_t>(argument.dims.size()),
              reinterpret_cast<void*>(address), argument.dims.data(), argument.strides_bytes.data(),
              im2col.lower_corner.data(), im2col.upper_corner.data(), im2col.channels_per_pixel,
              im2col.pixels_per_column, element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, argument.swizzle,
              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeIm2col");
    return map;
  }
  check(DriverApi::get().cuTensorMapEncodeTiled(
            &map, argument.data_type, static_cast<cuuint32_t>(argument.dims.size()), reinterpret_cast<void*>(address),
            argument.dims.data(), argument.strides_bytes.data(), argument.box.data(), element_strides.data(),
            CU_TENSOR_MAP_INTERLEAVE_NONE, argument.swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled");
  return map;
}

}  // namespace optune::backends::cuda
