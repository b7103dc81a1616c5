// The element types of every operand optune passes, built-in operators' and user kernels' alike:
// names as keys, kernel files and worker messages write them, the one table of sizes, whether a
// type is floating, its unit roundoff, and how a value of it is stored and read on the host.
// Apart from the kernel file's reader so that a worker (even a cross-compiled one) can make and
// check operands without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace optune::kernels {

// kE4M3: OCP fp8 E4M3 (4 exponent bits, bias 7, 3 fraction bits, no infinity, largest 448), the
// 8-bit float of Hopper's tensor cores and torch.float8_e4m3fn.
// kU7: a u8 that holds 0..127 only, 7-bit activations (PyTorch's reduce_range): the contract under
// which AVX2's vpmaddubsw multiplies u8 by s8 exactly (gemm_int8.hpp).
enum class DataType { kF16, kBF16, kF32, kF64, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64, kE4M3, kU7 };

std::string_view data_type_name(DataType type);  // "f32"
DataType parse_data_type(std::string_view name);  // throws std::invalid_argument listing the known
std::size_t data_type_bytes(DataType type);
bool is_floating(DataType type);
// Half the distance from 1 to the next value: 2^-11 for f16, 2^-8 for bf16, 2^-24 for f32, 2^-53
// for f64, 2^-4 for e4m3; 0 for integers (exact). Rounding a value to the type moves it by at most this, relative.
double unit_roundoff(DataType type);
// The values an integer type holds, as doubles (u7: 0..127; i64/u64 bounded by exact doubles
// anyway, u64 and the floating types unbounded above).
std::pair<double, double> integer_range(DataType type);
// The known names, space-separated, for messages: "f16 bf16 f32 ...".
std::string data_type_names();

// `value` converted to the type (round to nearest even for floats; integers as C++ converts
// them, so callers keep values in range), stored at element i of `bytes`.
void store_element(DataType type, std::byte* bytes, std::size_t i, double value);
double load_element(DataType type, const std::byte* bytes, std::size_t i);
// The same for many elements at once (a check's millions: one dispatch on the type, not one per
// element): elements first..first+count-1 into `out`; `value` into elements 0..count-1.
void load_elements(DataType type, const std::byte* bytes, std::size_t first, std::size_t count, double* out);
void fill_elements(DataType type, std::byte* bytes, std::size_t count, double value);

// IEEE binary16 and bfloat16 <-> binary32, round to nearest even; NaN stays NaN.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t half);
std::uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(std::uint16_t bfloat16);
// E4M3 <-> binary32: round to nearest even, saturating beyond 448 to +-448 as NVIDIA's
// conversions (satfinite) and PyTorch's do; NaN stays NaN (0x7f with the sign).
std::uint8_t float_to_e4m3(float value);
float e4m3_to_float(std::uint8_t e4m3);

enum class BufferInit { kRandom, kZeros, kOnes, kIota };
std::string_view buffer_init_name(BufferInit init);  // "random"
BufferInit parse_buffer_init(std::string_view name);  // throws std::invalid_argument

}  // namespace optune::kernels
