// conv2d in int8 and bf16 on the dot-product GEMMs (gemm_int8.hpp, gemm_bf16.hpp): per NCHW
// image, the NCHW output is the GEMM
//   out[K][P*Q] = filter[K][C*R*S] x columns[C*R*S][P*Q]
// where the OIHW filter is the row-major A as it lies (the dot kernels read it in place, or pack
// it per call: it is small) and `columns` is the image's im2col matrix, written once per image by
// all threads (rows split between them) and packed by the GEMM as any dense B. A 1x1, stride-1,
// unpadded layer's columns are the image itself.
//
// int8: a u8 image (activations, as VNNI's vpdpbusd wants its unsigned operand) with an s8 filter,
// or s8 with s8 as Arm runs int8 (SDOT there, the pair path elsewhere), exact int32 sums and
// output; bf16: bf16 image, filter and output, float32 sums rounded once. Padding reads as the
// element type's zero.
//
//   optune::kernels::cpu::conv2d_dot<GemmInt8Config{...}>(dims, input, filter, output);
//   optune::kernels::cpu::conv2d_dot<GemmBf16Config{...}>(dims, input, filter, output);
// The config is the GEMM's (M = K, N = P * Q, depth = C * R * S); its threads write the columns too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/gemm_bf16.hpp"
#include "optune/kernels/cpu/gemm_int8.hpp"

namespace optune::kernels::cpu {
namespace conv_dot_detail {

using Index = std::int64_t;

constexpr bool columns_are_the_image(const Conv2dDims& d) {
  return d.R == 1 && d.S == 1 && d.stride == 1 && d.pad == 0 && d.dilation == 1;
}

// Row (c, r, s) of the im2col matrix of one NCHW image: Q * P output pixels, each the input pixel
// tap (r, s) of it reads, or zero in the padding. Written in few long copies: a call per output
// row of a 7x7 or 14x14 layer (three of memset and memcpy) took longer than oneDNN's whole
// convolution.
template <typename T>
void columns_row(const Conv2dDims& d, const T* image, Index row, T* dst) {
  const Index P = d.out_h(), Q = d.out_w();
  const Index c = row / (d.R * d.S), r = row / d.S % d.R, s = row % d.S;
  const T* plane = image + c * d.H * d.W;
  // Output columns [q_begin, q_end) read inside an input row, output rows [p_begin, p_end) inside
  // the image; the rest is padding.
  const Index offset = s * d.dilation - d.pad, top = r * d.dilation - d.pad;
  const Index q_begin = std::clamp<Index>((-offset + d.stride - 1) / d.stride, 0, Q);
  const Index q_end = std::clamp<Index>((d.W - offset + d.stride - 1) / d.stride, q_begin, Q);
  const Index p_begin = std::clamp<Index>((-top + d.stride - 1) / d.stride, 0, P);
  const Index p_end = std::clamp<Index>((d.H - top + d.stride - 1) / d.stride, p_begin, P);
  std::memset(static_cast<void*>(dst), 0, p_begin * Q * sizeof(T));
  std::memset(static_cast<void*>(dst + p_end * Q), 0, (P - p_end) * Q * sizeof(T));
  if (q_begin == q_end) {
    std::memset(static_cast<void*>(dst + p_begin * Q), 0, (p_end - p_begin) * Q * sizeof(T));
    return;
  }
  if (d.stride == 1 && Q == d.W) {
    // Output and input rows are equally long: the inside rows are one run in both, copied at once;
    // then the padding columns, which took the neighbouring row's pixels, are zeroed.
    const Index first = p_begin * Q + q_begin, last = (p_end - 1) * Q + q_end;
    std::memcpy(static_cast<void*>(dst + first), plane + first + top * d.W + offset, (last - first) * sizeof(T));
    for (Index q = 0; q < q_begin; ++q)
      for (Index p = p_begin; p < p_end; ++p) dst[p * Q + q] = T{};
    for (Index q = q_end; q < Q; ++q)
      for (Index p = p_begin; p < p_end; ++p) dst[p * Q + q] = T{};
    return;
  }
  for (Index p = p_begin; p < p_end; ++p) {
    const T* in = plane + (p * d.stride + top) * d.W;
    T* out = dst + p * Q;
    for (Index q = 0; q < q_begin; ++q) out[q] = T{};
    for (Index q = q_begin; q < q_end; ++q) out[q] = in[q * d.stride + offset];
    for (Index q = q_end; q < Q; ++q) out[q] = T{};
  }
}

template <int Threads, typename T>
void write_columns(const Conv2dDims& d, const T* image, T* columns) {
  const Index rows = d.C * d.R * d.S, pixels = d.out_h() * d.out_w();
#if defined(_OPENMP)
#pragma omp parallel for num_threads(Threads) if (Threads > 1)
#endif
  for (Index row = 0; row < rows; ++row) columns_row(d, image, row, columns + row * pixels);
}

}  // namespace conv_dot_detail

template <auto Cfg, typename TIn, typename TW, typename TOut>
void conv2d_dot(const Conv2dDims& d, const TIn* input, const TW* filter, TOut* output) {
  using namespace conv_dot_detail;
  using Config = std::remove_cvref_t<decltype(Cfg)>;
  constexpr bool kBf16 = std::is_same_v<Config, GemmBf16Config>;
  static_assert(kBf16 || std::is_same_v<Config, GemmInt8Config>, "a GemmInt8Config or a GemmBf16Config");
  static_assert(!kBf16 || (std::is_same_v<TIn, bfloat16> && std::is_same_v<TW, bfloat16> &&
                           std::is_same_v<TOut, bfloat16>),
                "bf16 convolution: bf16 input, filter and output");
  static_assert(kBf16 || std::is_same_v<TOut, std::int32_t>, "int8 convolution: int32 output");
  const Index P = d.out_h(), Q = d.out_w(), pixels = P * Q, depth = d.C * d.R * d.S;
  thread_local AlignedBuffer columns_buffer;
  TIn* columns = nullptr;
  if (!columns_are_the_image(d)) {
    const Index floats = (depth * pixels * static_cast<Index>(sizeof(TIn)) + 3) / 4;
    columns = reinterpret_cast<TIn*>(columns_buffer.reserve(static_cast<std::size_t>(floats)));
  }
  for (Index n = 0; n < d.N; ++n) {
    const TIn* image = input + n * d.C * d.H * d.W;
    const TIn* b = image;
    if (columns != nullptr) {
      write_columns<Cfg.threads>(d, image, columns);
      b = columns;
    }
    TOut* out = output + n * d.K * pixels;
    if constexpr (kBf16) {
      gemm_bf16<Cfg>(d.K, pixels, depth, filter, depth, b, pixels, out, pixels);
    } else {
      gemm_int8<Cfg>(d.K, pixels, depth, filter, depth, b, pixels, out, pixels);
    }
  }
}

}  // namespace optune::kernels::cpu
