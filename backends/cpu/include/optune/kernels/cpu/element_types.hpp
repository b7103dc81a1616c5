// The 16-bit floating element types of CPU kernels, as they sit in memory (a consumer's buffers
// of bf16 or IEEE half values), and their conversions to and from float32: widen() for reading,
// narrow<T>() (round to nearest even) for writing. Plain structs, so that the two types, both 16
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

// The compiler's half type: GCC 12 has _Float16 on x86-64 (F16C's conversions where the target
// has F16C, a library call elsewhere) and __fp16 on aarch64 (the FP16 extension's or base
// AArch64's conversion instructions).
#if defined(__aarch64__)
using CompilerHalf = __fp16;
#else
using CompilerHalf = _Float16;
#endif

inline float widen(float value) { return value; }
inline float widen(bfloat16 value) { return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16); }
inline float widen(float16 value) { return static_cast<float>(std::bit_cast<CompilerHalf>(value.bits)); }

template <typename T>
T narrow(float value);
template <>
inline float narrow<float>(float value) {
  return value;
}
template <>
inline bfloat16 narrow<bfloat16>(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((bits >> 16) | 0x40u)};  // NaN stays NaN
  return {static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16)};
}
template <>
inline float16 narrow<float16>(float value) {
  return {std::bit_cast<std::uint16_t>(static_cast<CompilerHalf>(value))};
}

}  // namespace optune::kernels::cpu
