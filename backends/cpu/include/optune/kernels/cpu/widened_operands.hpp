// A float32 kernel run on operands of another element type: the convolution templates take f16,
// bf16 (and depthwise int8) this way, widening the input and the filter to float32 buffers and
// rounding the float32 result into the output's type (element_types.hpp: widen, narrow). The
// conversions are element-wise, so any layout converts alike. int8 stays exact where every
// partial sum is an integer below 2^24 in magnitude (float32's exact integers): the templates
// admit only such layers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/element_types.hpp"

namespace optune::kernels::cpu {

// `count` elements of src widened into `buffer` (grown as needed); returns its floats. A float
// source is returned as it is.
template <typename T>
const float* widened(const T* src, std::size_t count, AlignedBuffer& buffer, int threads) {
  if constexpr (std::is_same_v<T, float>) {
    return src;
  } else {
    float* dst = buffer.reserve(count);
    const auto n = static_cast<std::int64_t>(count);
#if defined(_OPENMP)
#pragma omp parallel for simd num_threads(threads) if (threads > 1 && n >= 65536)
#endif
    for (std::int64_t i = 0; i < n; ++i) dst[i] = widen(src[i]);
    (void)threads;
    return dst;
  }
}

// `count` float32 results rounded into dst.
template <typename T>
void narrowed(const float* src, std::size_t count, T* dst, int threads) {
  const auto n = static_cast<std::int64_t>(count);
#if defined(_OPENMP)
#pragma omp parallel for simd num_threads(threads) if (threads > 1 && n >= 65536)
#endif
  for (std::int64_t i = 0; i < n; ++i) dst[i] = narrow<T>(src[i]);
  (void)threads;
}

}  // namespace optune::kernels::cpu
