#include "optune/kernels/data_type.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
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
  int mantissa_bits;  // floating types: stored fraction bits (the unit roundoff is 2^-(bits + 1))
};
constexpr std::array<DataTypeRow, 14> kDataTypes = {{
    {DataType::kF16, "f16", 2, true, 10},   {DataType::kBF16, "bf16", 2, true, 7},
    {DataType::kF32, "f32", 4, true, 23},   {DataType::kF64, "f64", 8, true, 52},
    {DataType::kI8, "i8", 1, false, 0},     {DataType::kU8, "u8", 1, false, 0},
    {DataType::kI16, "i16", 2, false, 0},   {DataType::kU16, "u16", 2, false, 0},
    {DataType::kI32, "i32", 4, false, 0},   {DataType::kU32, "u32", 4, false, 0},
    {DataType::kI64, "i64", 8, false, 0},   {DataType::kU64, "u64", 8, false, 0},
    {DataType::kE4M3, "e4m3", 1, true, 3},  {DataType::kU7, "u7", 1, false, 0},
}};

template <typename T>
void store(std::byte* out, T value) {
  std::memcpy(out, &value, sizeof value);
}

template <typename T>
T load(const std::byte* in) {
  T value;
  std::memcpy(&value, in, sizeof value);
  return value;
}

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

double unit_roundoff(DataType type) {
  const DataTypeRow& row = data_type_row(type);
  return row.is_floating ? std::ldexp(1.0, -(row.mantissa_bits + 1)) : 0.0;
}

std::string data_type_names() {
  std::string names;
  for (const auto& row : kDataTypes) {
    if (!names.empty()) names += ' ';
    names += row.name;
  }
  return names;
}

DataType parse_data_type(std::string_view name) {
  for (const auto& row : kDataTypes)
    if (row.name == name) return row.type;
  throw std::invalid_argument("'" + std::string(name) + "' is not a dtype (" + data_type_names() + ")");
}

std::pair<double, double> integer_range(DataType type) {
  switch (type) {
    case DataType::kI8: return {-128, 127};
    case DataType::kU8: return {0, 255};
    case DataType::kU7: return {0, 127};
    case DataType::kI16: return {-32768, 32767};
    case DataType::kU16: return {0, 65535};
    case DataType::kI32: return {-2147483648.0, 2147483647.0};
    case DataType::kU32: return {0, 4294967295.0};
    case DataType::kU64: return {0, std::numeric_limits<double>::infinity()};
    default: return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
}

void store_element(DataType type, std::byte* bytes, std::size_t i, double value) {
  std::byte* at = bytes + i * data_type_bytes(type);
  switch (type) {
    case DataType::kF16: return store(at, float_to_half(static_cast<float>(value)));
    case DataType::kBF16: return store(at, float_to_bfloat16(static_cast<float>(value)));
    case DataType::kF32: return store(at, static_cast<float>(value));
    case DataType::kF64: return store(at, value);
    case DataType::kI8: return store(at, static_cast<std::int8_t>(value));
    case DataType::kU8:
    case DataType::kU7: return store(at, static_cast<std::uint8_t>(value));
    case DataType::kI16: return store(at, static_cast<std::int16_t>(value));
    case DataType::kU16: return store(at, static_cast<std::uint16_t>(value));
    case DataType::kI32: return store(at, static_cast<std::int32_t>(value));
    case DataType::kU32: return store(at, static_cast<std::uint32_t>(value));
    case DataType::kI64: return store(at, static_cast<std::int64_t>(value));
    case DataType::kU64: return store(at, static_cast<std::uint64_t>(value));
    case DataType::kE4M3: return store(at, float_to_e4m3(static_cast<float>(value)));
  }
}

double load_element(DataType type, const std::byte* bytes, std::size_t i) {
  const std::byte* at = bytes + i * data_type_bytes(type);
  switch (type) {
    case DataType::kF16: return half_to_float(load<std::uint16_t>(at));
    case DataType::kBF16: return bfloat16_to_float(load<std::uint16_t>(at));
    case DataType::kF32: return load<float>(at);
    case DataType::kF64: return load<double>(at);
    case DataType::kI8: return load<std::int8_t>(at);
    case DataType::kU8:
    case DataType::kU7: return load<std::uint8_t>(at);
    case DataType::kI16: return load<std::int16_t>(at);
    case DataType::kU16: return load<std::uint16_t>(at);
    case DataType::kI32: return load<std::int32_t>(at);
    case DataType::kU32: return load<std::uint32_t>(at);
    case DataType::kI64: return static_cast<double>(load<std::int64_t>(at));
    case DataType::kU64: return static_cast<double>(load<std::uint64_t>(at));
    case DataType::kE4M3: return e4m3_to_float(load<std::uint8_t>(at));
  }
  return 0;
}

namespace {

template <typename Convert>
void load_each(const std::byte* bytes, std::size_t first, std::size_t count, double* out, std::size_t size,
               Convert convert) {
  for (std::size_t i = 0; i < count; ++i) out[i] = convert(bytes + (first + i) * size);
}

}  // namespace

void load_elements(DataType type, const std::byte* bytes, std::size_t first, std::size_t count, double* out) {
  switch (type) {
    case DataType::kF16:
      return load_each(bytes, first, count, out, 2, [](const std::byte* at) { return half_to_float(load<std::uint16_t>(at)); });
    case DataType::kBF16:
      return load_each(bytes, first, count, out, 2,
                       [](const std::byte* at) { return bfloat16_to_float(load<std::uint16_t>(at)); });
    case DataType::kF32:
      return load_each(bytes, first, count, out, 4, [](const std::byte* at) { return double(load<float>(at)); });
    default:
      for (std::size_t i = 0; i < count; ++i) out[i] = load_element(type, bytes, first + i);
  }
}

void fill_elements(DataType type, std::byte* bytes, std::size_t count, double value) {
  if (count == 0) return;
  store_element(type, bytes, 0, value);
  const std::size_t size = data_type_bytes(type);
  // Doubling copies of what is filled so far.
  for (std::size_t done = 1; done < count;) {
    const std::size_t now = std::min(done, count - done);
    std::memcpy(bytes + done * size, bytes, now * size);
    done += now;
  }
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)  // inf or NaN (a NaN keeps a payload bit)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0));
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (magnitude < 0x38800000u) {  // a half subnormal or zero: scale into integer units of 2^-24
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // exact; rounding below is to even
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  const std::uint32_t rebased = magnitude - 0x38000000u;
  const std::uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

float half_to_float(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu;
  const std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float value = static_cast<float>(mantissa) / 16777216.0f;
    return sign ? -value : value;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bfloat16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  // A NaN keeps its sign and a quiet bit: truncation could otherwise leave an infinity.
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  // Round the 16 dropped bits to nearest even (an overflow carries into the exponent: inf).
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

float bfloat16_to_float(std::uint16_t bfloat16) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bfloat16) << 16);
}

std::uint8_t float_to_e4m3(float value) {
  const std::uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value)) return sign | 0x7f;
  const float magnitude = std::fabs(value);
  if (magnitude >= 448.0f) return sign | 0x7e;  // saturate (infinity too): E4M3 has none
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  // Steps of the binade: 2^-9 among subnormals (below 2^-6), else an eighth of the binade's base.
  const int step_exponent = std::max(exponent - 1, -6) - 3;
  // Round to nearest even in units of the step (exact in float: at most 4 significant bits kept).
  const float units = std::nearbyint(std::ldexp(magnitude, -step_exponent));
  const float rounded = std::ldexp(units, step_exponent);
  if (rounded >= 448.0f) return sign | 0x7e;  // rounded up past the largest: saturate
  if (rounded < std::ldexp(1.0f, -6)) return sign | static_cast<std::uint8_t>(units);  // subnormal (or 2^-6 exactly below)
  int rounded_exponent = 0;
  const float fraction = std::frexp(rounded, &rounded_exponent);  // in [0.5, 1)
  const int biased = rounded_exponent - 1 + 7;
  const auto mantissa = static_cast<std::uint8_t>(std::lround((fraction * 2 - 1) * 8));
  return sign | static_cast<std::uint8_t>(biased << 3) | mantissa;
}

float e4m3_to_float(std::uint8_t e4m3) {
  const bool negative = (e4m3 & 0x80) != 0;
  const int exponent = (e4m3 >> 3) & 0xf, mantissa = e4m3 & 0x7;
  float value;
  if (exponent == 0xf && mantissa == 0x7) value = std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0) value = std::ldexp(float(mantissa), -9);  // subnormal: mantissa * 2^-9
  else value = std::ldexp(1.0f + float(mantissa) / 8, exponent - 7);
  return negative ? -value : value;
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
