// The channel-blocked activation layout NCHW[b]c ("nchw8c" for b = 8): [N][ceil(C/b)][H][W][b],
// the layout oneDNN (nChw8c) and TVM's x86 schedules (NCHWc) keep between the conv layers of a
// network, so that each layer reads `b` channels of a pixel as one vector and no layer pays for a
// transform. Channels past C (the last block's padding) are zero when a kernel writes them, and
// are never read into a result (the packed filters hold zero weights there).
//
// NHWC ("channels last", [N][H][W][C]) is the same image in one block of all C channels, so its
// conversions are those of NCHW[C]c; they also turn an OHWI filter ([K][R][S][C]) into OIHW.
//
// Conversions to and from NCHW: for references, tests and the edges of a network (its input
// image and its output), not for the inner layers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace optune::kernels {

// Floats of an N x C x H x W tensor in NCHW[block]c (channels rounded up to whole blocks).
constexpr std::size_t nchwc_size(std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W, int block) {
  return static_cast<std::size_t>(N * ((C + block - 1) / block) * block * H * W);
}

// NCHW -> NCHW[block]c; the padding channels of the last block become zero. Any element type.
template <typename T>
void nchw_to_nchwc(const T* __restrict src, std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W, int block,
                   T* __restrict dst) {
  const std::int64_t blocks = (C + block - 1) / block, plane = H * W;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t cb = 0; cb < blocks; ++cb) {
      T* out = dst + (n * blocks + cb) * plane * block;
      for (std::int64_t i = 0; i < plane; ++i) {
        for (int c = 0; c < block; ++c) {
          const std::int64_t channel = cb * block + c;
          out[i * block + c] = channel < C ? src[(n * C + channel) * plane + i] : T(0);
        }
      }
    }
  }
}

// NCHW[block]c -> NCHW; the padding channels are dropped.
template <typename T>
void nchwc_to_nchw(const T* __restrict src, std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W, int block,
                   T* __restrict dst) {
  const std::int64_t blocks = (C + block - 1) / block, plane = H * W;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t channel = 0; channel < C; ++channel) {
      const T* in = src + ((n * blocks + channel / block) * plane) * block + channel % block;
      T* out = dst + (n * C + channel) * plane;
      for (std::int64_t i = 0; i < plane; ++i) out[i] = in[i * block];
    }
  }
}

// NCHW -> NHWC (and OIHW -> OHWI, as N = K filters of C x R x S). Any element type.
template <typename T>
void nchw_to_nhwc(const T* __restrict src, std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W,
                  T* __restrict dst) {
  nchw_to_nchwc(src, N, C, H, W, static_cast<int>(C), dst);
}

// NHWC -> NCHW (and OHWI -> OIHW).
template <typename T>
void nhwc_to_nchw(const T* __restrict src, std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W,
                  T* __restrict dst) {
  nchwc_to_nchw(src, N, C, H, W, static_cast<int>(C), dst);
}

}  // namespace optune::kernels
