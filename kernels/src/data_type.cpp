#include "optune/kernels/data_type.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace optune::kernels {
namespace {

struct DataTypeRow {
  DataType type;
  std::string_view name;
  std::size_t bytes;
  bool is_floating;
};
constexpr std::array<DataTypeRow, 11> kDataTypes = {{
    {DataType::kF16, "f16", 2, true}, {DataType::kF32, "f32", 4, true}, {DataType::kF64, "f64", 8, true},
    {DataType::kI8, "i8", 1, false},  {DataType::kU8, "u8", 1, false},  {DataType::kI16, "i16", 2, false},
    {DataType::kU16, "u16", 2, false}, {DataType::kI32, "i32", 4, false}, {DataType::kU32, "u32", 4, false},
    {DataType::kI64, "i64", 8, false}, {DataType::kU64, "u64", 8, false},
}};

const DataTypeRow& data_type_row(DataType type) {
  for (const auto& row : kDataTypes)
    if (row.type == type) return row;
  throw std::logic_error("unlisted data type");
}

constexpr std::array<std::pair<BufferInit, std::string_view>, 4> kInits = {{
    {BufferInit::kRandom, "random"}, {BufferInit::kZeros, "zeros"}, {BufferInit::kOnes, "ones"}, {BufferInit::kIota, "iota"},
}};

}  // namespace

std::string_view data_type_name(DataType type) { return data_type_row(type).name; }
std::size_t data_type_bytes(DataType type) { return data_type_row(type).bytes; }
bool is_floating(DataType type) { return data_type_row(type).is_floating; }

DataType parse_data_type(std::string_view name) {
  for (const auto& row : kDataTypes)
    if (row.name == name) return row.type;
  throw std::invalid_argument("'" + std::string(name) + "' is not a dtype (f16 f32 f64 i8 u8 i16 u16 i32 u32 i64 u64)");
}

std::string_view buffer_init_name(BufferInit init) {
  for (const auto& [value, name] : kInits)
    if (value == init) return name;
  throw std::logic_error("unlisted buffer init");
}

BufferInit parse_buffer_init(std::string_view name) {
  for (const auto& [value, known] : kInits)
    if (known == name) return value;
  throw std::invalid_argument("'" + std::string(name) + "' is not an init (random, zeros, ones, iota)");
}

}  // namespace optune::kernels
