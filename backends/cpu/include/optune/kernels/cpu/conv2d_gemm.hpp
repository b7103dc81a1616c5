// conv2d's GEMM path (Conv2dConfig::algorithm = kGemm): per image, the NCHW output is a GEMM
//   out[K][P*Q] = filter[K][C*R*S] x columns[C*R*S][P*Q]
// where the OIHW filter already is the row-major K x (C*R*S) matrix and `columns` is the im2col
// matrix of the image. It runs on the GEMM kernel (gemm.hpp: its blocking loops, packing and
// micro-kernel) with two operand sources of its own:
//   - the filter packed once, with the weights (gemm_prepack_a), so no call repacks it;
//   - the columns packed panel by panel straight from the NCHW image (ImageColumns), so the
//     im2col matrix is never written; a 1x1, stride-1, unpadded layer's columns are the image
//     itself (a plain dense B, no copy at all).
// Pointwise and strided 1x1 layers and layers with few input channels (ResNet's 7x7 stem) are
// GEMMs with a long reduction and no reuse for a direct kernel's register tile to exploit.
//
// Called through conv2d.hpp (conv2d_pack_filter / conv2d_packed dispatch on the algorithm).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/gemm.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace conv_gemm_detail {

using gemm_detail::Index;

// A layer whose columns matrix is the image itself: out[K][H*W] = filter[K][C] x image[C][H*W].
constexpr bool columns_are_the_image(const Conv2dDims& d) {
  return d.R == 1 && d.S == 1 && d.stride == 1 && d.pad == 0;
}

// dst[j] = src[2 * j] for j < NR, reading src[0, 2 * NR): two vector loads and a shuffle per
// 8 floats where the ISA has 8-lane vectors (a scalar strided gather would dominate the packing
// of stride-2 layers).
template <int NR>
[[gnu::always_inline]] inline void gather_even(const float* __restrict src, float* __restrict dst) {
#if defined(__AVX__)
  if constexpr (NR % 8 == 0) {
    using V = Simd<8>;
#pragma GCC unroll 8
    for (int j = 0; j < NR; j += 8) {
      const V::Vector a = V::load(src + 2 * j), b = V::load(src + 2 * j + 8);
      V::store(dst + j, __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14));
    }
    return;
  }
#endif
  for (int j = 0; j < NR; ++j) dst[j] = src[2 * j];
}

// The im2col matrix of one NCHW image as a GEMM B operand that is only ever packed: row
// p = (c * R + r) * S + s (the OIHW filter's column order), column j = output pixel p * Q + q.
struct ImageColumns {
  static constexpr bool kInPlace = false;  // there is no matrix to read in place
  const float* image;
  Conv2dDims d;
  Index P, Q;
  Index col0 = 0;  // first column of this (thread's) slice

  ImageColumns columns_from(Index j) const {
    ImageColumns shifted = *this;
    shifted.col0 += j;
    return shifted;
  }

  // The NR-column panels [panel_begin, panel_end) of block [pc, pc + kc) x [jc, jc + nc).
  template <int NR>
  void pack(Index pc, Index kc, Index jc, Index nc, Index panel_begin, Index panel_end, float* dst) const {
    for (Index panel = panel_begin; panel < panel_end; ++panel) {
      const Index j = panel * NR;
      pack_panel<NR>(pc, kc, col0 + jc + j, std::min<Index>(NR, nc - j), dst + j * kc);
    }
  }

  // Rows [p0, p0 + kc) of columns [j0, j0 + n) into one panel (p-major, zero-padded to NR).
  template <int NR>
  void pack_panel(Index p0, Index kc, Index j0, Index n, float* __restrict dst) const {
    if (n == NR && j0 % Q + NR <= Q) {
      pack_row_panel<NR>(p0, kc, j0 / Q, j0 % Q, dst);
    } else {
      pack_any_panel<NR>(p0, kc, j0, n, dst);
    }
  }

  // The common case: NR pixels of one output row. Each depth row of the panel is NR input
  // pixels of one input row, `stride` apart: a copy (stride 1) or a strided gather.
  template <int NR>
  void pack_row_panel(Index p0, Index kc, Index oh, Index ow0, float* __restrict dst) const {
    Index c = p0 / (d.R * d.S), r = p0 / d.S % d.R, s = p0 % d.S;
    for (Index p = 0; p < kc; ++p, dst += NR) {
      const Index ih = oh * d.stride - d.pad + r * d.dilation;
      const Index iw0 = ow0 * d.stride - d.pad + s * d.dilation;
      if (ih < 0 || ih >= d.H) {
        std::fill_n(dst, NR, 0.0f);
      } else {
        const float* __restrict row = image + (c * d.H + ih) * d.W;
        if (iw0 >= 0 && iw0 + (NR - 1) * d.stride < d.W) {
          if (d.stride == 1) {
            __builtin_memcpy(dst, row + iw0, NR * sizeof(float));
          } else if (d.stride == 2 && iw0 + 2 * NR <= d.W) {
            gather_even<NR>(row + iw0, dst);
          } else {
            for (int j = 0; j < NR; ++j) dst[j] = row[iw0 + j * d.stride];
          }
        } else {  // the panel touches the left or right padding
          for (int j = 0; j < NR; ++j) {
            const Index iw = iw0 + j * d.stride;
            dst[j] = iw >= 0 && iw < d.W ? row[iw] : 0.0f;
          }
        }
      }
      if (++s == d.S) {
        s = 0;
        if (++r == d.R) {
          r = 0;
          ++c;
        }
      }
    }
  }

  // Panels that span output rows (Q < NR, or at a row's end) or stop short of NR columns.
  template <int NR>
  void pack_any_panel(Index p0, Index kc, Index j0, Index n, float* __restrict dst) const {
    Index top[NR], left[NR];  // the input pixel of tap (0, 0) for each column
    for (int j = 0; j < NR; ++j) {
      const Index pixel = j0 + std::min<Index>(j, n - 1);
      top[j] = pixel / Q * d.stride - d.pad;
      left[j] = pixel % Q * d.stride - d.pad;
    }
    Index c = p0 / (d.R * d.S), r = p0 / d.S % d.R, s = p0 % d.S;
    for (Index p = 0; p < kc; ++p, dst += NR) {
      const float* plane = image + c * d.H * d.W;
      for (int j = 0; j < NR; ++j) {
        const Index ih = top[j] + r * d.dilation, iw = left[j] + s * d.dilation;
        const bool inside = j < n && ih >= 0 && ih < d.H && iw >= 0 && iw < d.W;
        dst[j] = inside ? plane[ih * d.W + iw] : 0.0f;
      }
      if (++s == d.S) {
        s = 0;
        if (++r == d.R) {
          r = 0;
          ++c;
        }
      }
    }
  }
};

}  // namespace conv_gemm_detail

// Floats of the filter packed for the GEMM path.
template <Conv2dConfig Config>
std::size_t conv2d_gemm_packed_filter_size(const Conv2dDims& d) {
  return gemm_prepacked_a_size<conv2d_gemm_config(Config)>(d.K, d.C * d.R * d.S);
}

template <Conv2dConfig Config>
void conv2d_gemm_pack_filter(const Conv2dDims& d, const float* filter, float* packed) {
  const std::int64_t depth = d.C * d.R * d.S;
  gemm_prepack_a<conv2d_gemm_config(Config)>(d.K, depth, filter, depth, packed);
}

template <Conv2dConfig Config>
void conv2d_gemm_packed(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr GemmConfig G = conv2d_gemm_config(Config);
  using namespace conv_gemm_detail;
  const Index P = d.out_h(), Q = d.out_w(), depth = d.C * d.R * d.S;
  const gemm_detail::PrepackedA filter{packed_filter, gemm_detail::ceil_div(d.K, G.mr) * G.mr};
  for (Index n = 0; n < d.N; ++n) {
    const float* image = input + n * d.C * d.H * d.W;
    float* out = output + n * d.K * P * Q;
    if (columns_are_the_image(d)) {
      gemm_detail::run_operands<G>(d.K, P * Q, depth, filter, gemm_detail::DenseB{image, P * Q}, out, P * Q);
    } else {
      gemm_detail::run_operands<G>(d.K, P * Q, depth, filter, ImageColumns{image, d, P, Q}, out, P * Q);
    }
  }
}

}  // namespace optune::kernels::cpu
