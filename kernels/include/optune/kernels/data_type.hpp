// The element types of a user kernel's arguments (kernel_file.hpp) and how a buffer starts out:
// names as kernel files and worker messages write them, sizes, and whether a type is floating.
// Apart from the kernel file's reader so that a worker (even a cross-compiled one) can read a
// kernel's operands without it.
#pragma once

#include <cstddef>
#include <string_view>

namespace optune::kernels {

enum class DataType { kF16, kF32, kF64, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64 };

std::string_view data_type_name(DataType type);  // "f32"
DataType parse_data_type(std::string_view name);  // throws std::invalid_argument listing the known
std::size_t data_type_bytes(DataType type);
bool is_floating(DataType type);

enum class BufferInit { kRandom, kZeros, kOnes, kIota };
std::string_view buffer_init_name(BufferInit init);  // "random"
BufferInit parse_buffer_init(std::string_view name);  // throws std::invalid_argument

}  // namespace optune::kernels
