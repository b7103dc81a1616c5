// The 16-bit floating element types of CPU kernels, as they sit in memory (a consumer's buffers
// of bf16 or IEEE half values), and their conversions to and from float32: widen() for reading,
// narrow<T>() (round to nearest even) for writing; also of 8-bit integers (read exactly) and int32
// (written from a float32 sum that is an exact integer), for kernels that widen them. Plain structs, so that the two types, both 16
// bits, never convert into each other or into integers by accident.
#pragma once

#include <bit>
#include <cstdint>

namespace optune::kernels::cpu {

struct bfloat16 {
  std::uint16_t bits;
};
struct float16 {
  std::uint16_t bits;
};

// IEEE half bits to float and back (round to nearest even), in integer arithmetic: for compilers
// without a half type on the target (Clang 14 has no _Float16 on x86-64), so that a toolchain
// change to one of them still builds every candidate.
inline float half_bits_to_float(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu, mantissa = half & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // infinity, NaN
  if (exponent == 0) {  // zero and subnormals: mantissa x 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}
inline std::uint16_t float_to_half_bits(float value) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  bits &= 0x7fffffffu;
  std::uint32_t half;
  if (bits >= 0x47800000u) {  // 65536 and beyond, infinity, NaN (quieted)
    half = bits > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (bits < 0x38800000u) {  // below 2^-14: a subnormal or zero; the float addition rounds to even
    const float magic = std::bit_cast<float>(0x3f000000u);  // 0.5: its ulp is the half subnormals' 2^-24
    half = std::bit_cast<std::uint32_t>(std::bit_cast<float>(bits) + magic) - 0x3f000000u;
  } else {  // rebias, and round the 13 dropped bits to nearest even (a carry may reach infinity)
    half = (bits + 0xc8000fffu + ((bits >> 13) & 1u)) >> 13;
  }
  return static_cast<std::uint16_t>(half | sign);
}

// The compiler's half type: GCC 12 has _Float16 on x86-64 (F16C's conversions where the target
// has F16C, a library call elsewhere) and __fp16 on aarch64 (the FP16 extension's or base
// AArch64's conversion instructions). Compilers with neither convert in integers (above).
#if defined(__aarch64__)
using CompilerHalf = __fp16;
#define OPTUNE_COMPILER_HALF 1
#elif defined(__FLT16_MAX__)
using CompilerHalf = _Float16;
#define OPTUNE_COMPILER_HALF 1
#endif

inline float widen(float value) { return value; }
inline float widen(std::uint8_t value) { return static_cast<float>(value); }
inline float widen(std::int8_t value) { return static_cast<float>(value); }
inline float widen(bfloat16 value) { return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16); }
inline float widen(float16 value) {
#ifdef OPTUNE_COMPILER_HALF
  return static_cast<float>(std::bit_cast<CompilerHalf>(value.bits));
#else
  return half_bits_to_float(value.bits);
#endif
}

template <typename T>
T narrow(float value);
template <>
inline float narrow<float>(float value) {
  return value;
}
template <>
inline std::int32_t narrow<std::int32_t>(float value) {
  return static_cast<std::int32_t>(__builtin_lrintf(value));
}
template <>
inline bfloat16 narrow<bfloat16>(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((bits >> 16) | 0x40u)};  // NaN stays NaN
  return {static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16)};
}
template <>
inline float16 narrow<float16>(float value) {
#ifdef OPTUNE_COMPILER_HALF
  return {std::bit_cast<std::uint16_t>(static_cast<CompilerHalf>(value))};
#else
  return {float_to_half_bits(value)};
#endif
}

}  // namespace optune::kernels::cpu
