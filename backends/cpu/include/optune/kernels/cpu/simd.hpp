// SIMD vectors of float32 for the CPU kernels: GCC vector extensions, with fused multiply-add
// through the ISA's intrinsic. The intrinsic matters: optune compiles with -std=c++20 (ISO mode),
// where GCC defaults to -ffp-contract=off and would never fuse `acc + a * b` on its own.
// The lane count is a template argument so one header serves AVX-512 (16), AVX/AVX2 (8) and
// SSE/NEON (4); kMaxLanes says what the compile flags allow.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace optune::kernels::cpu {

// Widest float32 vector the compile flags (-march=...) support.
#if defined(__AVX512F__)
inline constexpr int kMaxLanes = 16;
#elif defined(__AVX__)
inline constexpr int kMaxLanes = 8;
#elif defined(__SSE2__) || defined(__ARM_NEON)
inline constexpr int kMaxLanes = 4;
#else
inline constexpr int kMaxLanes = 1;  // no SIMD: only scalar "vectors" of one lane
#endif

// Vector registers of that ISA, for register-budget reasoning (micro-tile accumulators).
#if defined(__AVX512F__) || defined(__aarch64__)
inline constexpr int kVectorRegisters = 32;
#else
inline constexpr int kVectorRegisters = 16;
#endif

constexpr bool is_supported_lanes(int lanes) {
  return lanes >= 1 && lanes <= kMaxLanes && (lanes & (lanes - 1)) == 0;
}

// GCC drops a vector_size attribute whose size depends on a template argument, so each width
// is spelled out.
template <int Lanes>
struct VectorOf;
template <>
struct VectorOf<1> {
  using type = float;
};
template <>
struct VectorOf<4> {
  typedef float type __attribute__((vector_size(16)));
};
template <>
struct VectorOf<8> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct VectorOf<16> {
  typedef float type __attribute__((vector_size(64)));
};

template <int Lanes>
struct Simd {
  static_assert(is_supported_lanes(Lanes), "SIMD lane count not supported by the compile flags");
  using Vector = typename VectorOf<Lanes>::type;

  [[gnu::always_inline]] static inline Vector load(const float* p) {
    Vector v;
    __builtin_memcpy(&v, p, sizeof(v));  // unaligned load (vmovups / ld1)
    return v;
  }
  [[gnu::always_inline]] static inline void store(float* p, Vector v) {
    __builtin_memcpy(p, &v, sizeof(v));
  }
  // One float read from memory into every lane (vbroadcastss / ld1r).
  [[gnu::always_inline]] static inline Vector broadcast(const float* p) {
#if defined(__AVX512F__)
    if constexpr (Lanes == 16) return _mm512_set1_ps(*p);
#endif
#if defined(__AVX__)
    if constexpr (Lanes == 8) return _mm256_broadcast_ss(p);
    if constexpr (Lanes == 4) return _mm_broadcast_ss(p);
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    if constexpr (Lanes == 4) return vld1q_dup_f32(p);
#endif
    // s - 0.0f is exact for every s (unlike 0.0f + s at s = -0.0f), so GCC folds it away.
    return *p - Vector{};
  }
  // Keeps a value in a register: GCC otherwise re-reads a loaded vector as a memory operand of
  // every FMA that uses it, and the micro-kernel becomes bound by loads instead of FMAs.
  [[gnu::always_inline]] static inline void keep_in_register(Vector& v) {
#if defined(__x86_64__) || defined(__i386__)
    if constexpr (Lanes > 1) asm("" : "+x"(v));
#elif defined(__aarch64__)
    if constexpr (Lanes > 1) asm("" : "+w"(v));
#endif
  }
  // a * b + c, fused where the ISA has it.
  [[gnu::always_inline]] static inline Vector fma(Vector a, Vector b, Vector c) {
#if defined(__AVX512F__)
    if constexpr (Lanes == 16) return _mm512_fmadd_ps(a, b, c);
#endif
#if defined(__FMA__)
    if constexpr (Lanes == 8) return _mm256_fmadd_ps(a, b, c);
    if constexpr (Lanes == 4) return _mm_fmadd_ps(a, b, c);
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    if constexpr (Lanes == 4) return vfmaq_f32(c, a, b);
#endif
    return a * b + c;
  }
};

}  // namespace optune::kernels::cpu
