// conv2d on the channel-blocked activation layout NCHW[b]c (layout.hpp), kept between the layers
// of a network: input [N][ceil(C/b)][H][W][b], output [N][ceil(K/b)][P][Q][b], b = Config.lanes,
// the filter packed by conv2d_pack_filter<Config> as for the NCHW kernel (conv2d.hpp). The blocked
// input already is the direct kernel's channel-blocked image (ic_block = b), so there is no
// layout transform in the call:
//   - pad = 0 (every 1x1 layer): the tiles read the input in place. A tile at the right or bottom
//     edge reads past its row into the next row or channel block, inside the tensor, and only
//     computes output pixels whose stores are clipped; the few tiles at the very end of the tensor
//     whose reads would leave it read a zero-extended copy of their input window instead.
//   - pad > 0: a zero-padded copy, one row memcpy per (image, channel block, row), small next to
//     the convolution it feeds.
// The same micro-kernel (conv_detail::conv_tile) and tile loops (conv_detail::for_each_tile) as
// conv2d.hpp; the tile's vectors are stored straight into the blocked output (oc_vectors whole
// layout blocks per tile, no transpose), through a scratch tile only where the tile is clipped.
// The output's channels past K are written as zeros (the packed filter is zero there).
//
//   conv2d_pack_filter<Config>(dims, filter, packed);
//   conv2d_nchwc_packed<Config>(dims, blocked_input, packed, blocked_output);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace conv_detail {

// Row `hp` of channel block `cb` of the zero-padded copy: row hp - pad of the blocked image's
// block (`image` is one image, [blocks][H][W][Block]), zero in the padding.
template <int Block>
void copy_padded_row(const Conv2dDims& d, const BlockedImage& b, const float* __restrict image, Index cb,
                     Index hp, float* __restrict dst) {
  const Index h = hp - d.pad;
  if (h < 0 || h >= d.H) {
    std::fill_n(dst, b.row_floats(), 0.0f);
    return;
  }
  std::fill_n(dst, d.pad * Block, 0.0f);
  std::memcpy(dst + d.pad * Block, image + (cb * d.H + h) * d.W * Block, sizeof(float) * d.W * Block);
  const Index tail = (d.pad + d.W) * Block;
  std::fill_n(dst + tail, b.row_floats() - tail, 0.0f);
}

// The input window of one tile (rows [h0, h0 + rows) and columns [w0, w0 + cols) of every channel
// block of `image`, zero outside the image) into `window`: a blocked image of its own, whose
// geometry a tile can read instead of the tensor's.
template <int Block>
void copy_window(const Conv2dDims& d, const BlockedImage& b, const float* __restrict image, Index h0, Index w0,
                 const BlockedImage& window, float* __restrict dst) {
  for (Index cb = 0; cb < window.channel_blocks; ++cb) {
    for (Index r = 0; r < window.height; ++r) {
      float* row = dst + cb * window.plane_floats() + r * window.row_floats();
      const Index h = h0 + r, valid = h < d.H ? std::clamp<Index>(d.W - w0, 0, window.width) : 0;
      if (valid > 0) {
        std::memcpy(row, image + cb * b.plane_floats() + h * b.row_floats() + w0 * Block,
                    sizeof(float) * valid * Block);
      }
      std::fill_n(row + valid * Block, (window.width - valid) * Block, 0.0f);
    }
  }
}

template <Conv2dConfig Config, int FixedS>
void conv2d_nchwc_run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr int L = Config.lanes, OCV = Config.oc_vectors, OB = OCV * L;
  constexpr int OWB = Config.ow_block, OHB = Config.oh_block;
  const Index P = d.out_h(), Q = d.out_w();
  const Index in_blocks = ceil_div(d.C, L), out_blocks = ceil_div(d.K, L);
  const Index out_image_floats = out_blocks * P * Q * L;
  const Index filter_block_floats = in_blocks * d.R * d.S * L * OB;

  // What the tiles read: the input itself, or its zero-padded copy.
  const bool in_place = d.pad == 0;
  const BlockedImage b = in_place ? BlockedImage{in_blocks, L, d.H, d.W} : blocked_image(d, L, OHB, OWB);
  thread_local AlignedBuffer padded_buffer;  // the calling thread's; its team shares it
  float* padded = in_place ? nullptr : padded_buffer.reserve(static_cast<std::size_t>(d.N * b.floats()));
  const float* source = in_place ? input : padded;
  const TileGeometry g{b.channel_blocks, d.R, d.S, d.stride, d.dilation, b.row_floats(), b.plane_floats()};

  // In place, a tile whose reads would run past the tensor's end reads a copy of its window.
  const BlockedImage window{in_blocks, L, (OHB - 1) * d.stride + (d.R - 1) * d.dilation + 1,
                            (OWB - 1) * d.stride + (d.S - 1) * d.dilation + 1};
  const TileGeometry window_g{window.channel_blocks, d.R, d.S, d.stride, d.dilation, window.row_floats(),
                              window.plane_floats()};
  const Index tile_reach = (in_blocks - 1) * b.plane_floats() + (window.height - 1) * b.row_floats() +
                           window.width * L;  // floats from a tile's first input pixel to its last read, + 1
  const float* input_end = input + d.N * b.floats();

  auto fill_row = [&](Index row) {
    const Index n = row / (b.channel_blocks * b.height), rest = row % (b.channel_blocks * b.height);
    copy_padded_row<L>(d, b, input + n * in_blocks * d.H * d.W * L, rest / b.height, rest % b.height,
                       padded + row * b.row_floats());
  };
  auto run_tile = [&](Index n, Index kb, Index rt, Index ct) {
    const Index oh0 = rt * OHB, ow0 = ct * OWB;
    const float* in = source + n * b.floats() + (oh0 * b.row_floats() + ow0 * L) * d.stride;
    const TileGeometry* geometry = &g;
    if (in_place && in + tile_reach > input_end) {
      thread_local AlignedBuffer window_buffer;  // each thread's own
      float* copy = window_buffer.reserve(static_cast<std::size_t>(window.floats()));
      copy_window<L>(d, b, source + n * b.floats(), oh0 * d.stride, ow0 * d.stride, window, copy);
      in = copy;
      geometry = &window_g;
    }
    const float* filter = packed_filter + kb * filter_block_floats;
    float* out = output + n * out_image_floats + (kb * OCV * P * Q + oh0 * Q + ow0) * L;
    const Index rows = std::min<Index>(OHB, P - oh0), cols = std::min<Index>(OWB, Q - ow0);
    const Index vectors = std::min<Index>(OCV, out_blocks - kb * OCV);  // layout blocks of the output
    if (rows == OHB && cols == OWB && vectors == OCV) {
      conv_tile<L, OCV, L, OWB, OHB, FixedS>(in, filter, *geometry, out, {Q * L, L, P * Q * L});
      return;
    }
    alignas(64) float tile[OHB * OWB * OB];
    conv_tile<L, OCV, L, OWB, OHB, FixedS>(in, filter, *geometry, tile, {OWB * OB, OB, L});
    for (Index v = 0; v < vectors; ++v) {
      for (Index h = 0; h < rows; ++h) {
        for (Index j = 0; j < cols; ++j) {
          std::memcpy(out + v * P * Q * L + h * Q * L + j * L, tile + (h * OWB + j) * OB + v * L, sizeof(float) * L);
        }
      }
    }
  };
  for_each_tile<Config>(d, in_place ? 0 : d.N * b.channel_blocks * b.height, fill_row, run_tile);
}

}  // namespace conv_detail

// output = conv2d(input, filter) on NCHW[Config.lanes]c tensors, the filter packed by
// conv2d_pack_filter<Config>. Input channels past C (in the last block) may hold any finite value;
// output channels past K are written as zeros. FixedS as for conv2d_packed.
template <Conv2dConfig Config, int FixedS = -1>
void conv2d_nchwc_packed(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  static_assert(conv2d_config_error(Config) == nullptr, "invalid Conv2dConfig");
  static_assert(Config.lanes <= kMaxLanes,
                "Conv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  static_assert(Config.algorithm == ConvAlgorithm::kDirect,
                "conv2d_nchwc runs the direct algorithm only (Conv2dConfig::algorithm = kDirect)");
  static_assert(Config.ic_block == Config.lanes,
                "conv2d_nchwc needs ic_block == lanes: the NCHW[lanes]c input is the kernel's blocked image");
  conv_detail::with_filter_width<Config, FixedS>(
      d, [&]<int S>() { conv_detail::conv2d_nchwc_run<Config, S>(d, input, packed_filter, output); });
}

// One call that packs the filter (into a per-thread buffer) and convolves, like conv2d().
template <Conv2dConfig Config>
void conv2d_nchwc(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(conv2d_packed_filter_size<Config>(d));
  conv2d_pack_filter<Config>(d, filter, buffer);
  conv2d_nchwc_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
