// The pointwise path of conv2d on a kept NCHW[b]c layout (conv2d_nchwc.hpp runs it for 1x1
// filters without padding): at stride 1 on the input in place, at stride > 1 on a compacted copy
// of the pixels the layer uses (oneDNN's "reduce to unit stride"). Such a layer is a matrix
// product per image, output[K/b][M][b] = filter x input[C/b][M][b] over the M = P * Q pixels of a
// plane: no rows, no taps, no windows. A register tile is ow_block * oh_block consecutive pixels
// of a plane times oc_vectors layout blocks of output channels, and the per-tile work is three
// pointers (the general kernel's tile geometry, clipping and window checks cost as much as a
// tile's FMAs where C is small: 32 x 12 FMAs at C = 32).
//
// Loops, as a GEMM's (the filter, packed by conv2d_pack_filter, is the packed A; the input is B
// as it lies, blocks of b channels of consecutive pixels):
//   work items (image, output-channel block, band) in the config's loop order and split
//     (for_each_item), a band being a run of whole tiles of at least kBandPixels pixels (row_outer
//     keeps a band's input in cache across the output-channel blocks);
//   reduction passes of Config.ic_chunk input channels (one pass when 0), like a GEMM's kc: a
//     pass's chunk of the packed filter (ic_chunk x oc_vectors x lanes floats) stays in L1 across
//     the band's tiles; the first pass starts from zero, later ones add onto what the earlier
//     ones stored;
//   the band's tiles.
// Off the fast path: the plane's last tile, when partial, runs the micro-kernel instantiated for
// its pixels (a 7x7 plane in tiles of 4 ends with one pixel), and the last output-channel block,
// when fewer than oc_vectors layout blocks remain (K = 64 with oc_vectors 3), the one
// instantiated for that many blocks; both in place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu::conv_detail {

// The fewest pixels of a work item's band: long enough that a reduction pass's filter chunk is
// read from L1 by several tiles (a 14x14 plane with 12-pixel tiles would otherwise give 2).
inline constexpr Index kBandPixels = 64;

// Row `row` ([image][block][output row]) of the subsampled copy of a pointwise layer with stride
// > 1: every stride-th pixel of every stride-th input row, so that the tiles run a stride-1 layer
// on contiguous pixels.
template <int Block>
void copy_subsampled_row(const Conv2dDims& d, const float* __restrict input, Index row, float* __restrict dst) {
  const Index P = d.out_h(), Q = d.out_w();
  const float* src = input + ((row / P) * d.H + (row % P) * d.stride) * d.W * Block;  // (image, block) planes
  for (Index q = 0; q < Q; ++q) std::memcpy(dst + q * Block, src + q * d.stride * Block, sizeof(float) * Block);
}

// One register tile: Pixels consecutive pixels times Vectors layout blocks of output channels,
// reduced over `blocks` input-channel blocks (`in_plane` floats apart; `in` at the tile's first
// pixel of the first). `w` is the pass's packed filter, FilterStride floats per input channel
// (the config's whole output-channel block; the tile uses the first Vectors of it). Vector v of
// pixel j goes to out + j * out_pixel + v * out_vector; Accumulate adds onto what is there.
template <int Lanes, int Vectors, int FilterStride, int Pixels, bool Accumulate>
void pointwise_tile(const float* __restrict in, Index in_plane, Index blocks, const float* __restrict w,
                    float* __restrict out, Index out_pixel, Index out_vector) {
  using V = Simd<Lanes>;
  using Vector = typename V::Vector;
  Vector acc[Pixels][Vectors];
#pragma GCC unroll 32
  for (int j = 0; j < Pixels; ++j) {
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) acc[j][v] = Accumulate ? V::load(out + j * out_pixel + v * out_vector) : Vector{};
  }
  for (Index cb = 0; cb < blocks; ++cb) {
    const float* x = in + cb * in_plane;
#pragma GCC unroll 2
    for (int ic = 0; ic < Lanes; ++ic) {
      Vector weights[Vectors];
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) {
        weights[v] = V::load(w + v * Lanes);
        V::keep_in_register(weights[v]);
      }
      w += FilterStride;
#pragma GCC unroll 32
      for (int j = 0; j < Pixels; ++j) {
        const Vector pixel = V::broadcast(x + j * Lanes + ic);
#pragma GCC unroll 4
        for (int v = 0; v < Vectors; ++v) acc[j][v] = V::fma(pixel, weights[v], acc[j][v]);
      }
    }
  }
#pragma GCC unroll 32
  for (int j = 0; j < Pixels; ++j) {
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) V::store(out + j * out_pixel + v * out_vector, acc[j][v]);
  }
}

template <Conv2dConfig Config>
void conv2d_nchwc_pointwise_run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr int L = Config.lanes, OCV = Config.oc_vectors, OB = OCV * L;
  constexpr int T = Config.ow_block * Config.oh_block;  // pixels per tile (a plane has no rows here)
  const Index in_blocks = ceil_div(d.C, L), out_blocks = ceil_div(d.K, L), oc_blocks = ceil_div(d.K, OB);
  const Index pixels = d.out_h() * d.out_w();  // of an input plane too (compacted where stride > 1)
  const Index plane_floats = pixels * L;
  const Index tiles = ceil_div(pixels, T), whole_tiles = pixels / T;
  const Index band_tiles = std::min(tiles, ceil_div(kBandPixels, T)), bands = ceil_div(tiles, band_tiles);
  const Index chunk_blocks = Config.ic_chunk > 0 ? std::min<Index>(in_blocks, Config.ic_chunk / L) : in_blocks;
  const Index passes = ceil_div(in_blocks, chunk_blocks);
  const Index filter_block_floats = in_blocks * L * OB;

  const bool subsampled = d.stride > 1;
  thread_local AlignedBuffer copy_buffer;  // the calling thread's; its team shares it
  float* copy = subsampled ? copy_buffer.reserve(static_cast<std::size_t>(d.N * in_blocks * plane_floats)) : nullptr;
  const float* source = subsampled ? copy : input;
  const Index copy_rows = subsampled ? d.N * in_blocks * d.out_h() : 0;
  auto fill_row = [&](Index row) { copy_subsampled_row<L>(d, input, row, copy + row * d.out_w() * L); };

  auto run_item = [&](Index n, Index kb, Index band) {
    const Index first = band * band_tiles, last = std::min(tiles, first + band_tiles);
    const Index whole_end = std::min(last, whole_tiles);
    const Index vectors = std::min<Index>(OCV, out_blocks - kb * OCV);  // layout blocks of the output
    const float* image = source + n * in_blocks * plane_floats;
    const float* filter = packed_filter + kb * filter_block_floats;
    float* out = output + (n * out_blocks + kb * OCV) * plane_floats;
    for (Index pass = 0; pass < passes; ++pass) {
      const Index cb0 = pass * chunk_blocks, blocks = std::min(chunk_blocks, in_blocks - cb0);
      const float* in = image + cb0 * plane_floats;
      const float* w = filter + cb0 * L * OB;
      with_constant<OCV>(vectors, [&]<int Vectors>() {
        // The band's whole tiles, then the plane's last tile, when partial, on the micro-kernel
        // made for its pixels, in place; the first pass starts from zero.
        auto run_pass = [&]<bool Accumulate>() {
          for (Index t = first; t < whole_end; ++t) {
            pointwise_tile<L, Vectors, OB, T, Accumulate>(in + t * T * L, plane_floats, blocks, w, out + t * T * L, L,
                                                          plane_floats);
          }
          if constexpr (T > 1) {
            if (last > whole_end) {
              const Index at = whole_tiles * T * L;
              with_constant<T - 1>(pixels - whole_tiles * T, [&]<int Pixels>() {
                pointwise_tile<L, Vectors, OB, Pixels, Accumulate>(in + at, plane_floats, blocks, w, out + at, L,
                                                                   plane_floats);
              });
            }
          }
        };
        if (pass == 0) {
          run_pass.template operator()<false>();
        } else {
          run_pass.template operator()<true>();
        }
      });
    }
  };
  // The fused split hands out runs of items, about 16 per thread: an item can be as small as 64
  // pixels x 16 channels x C = 32 (2k cycles), where one grab at a time cost 1.3x on MobileNet's
  // pw1, and the threads took turns on the bands (each reading every band's input).
  const Index items = d.N * oc_blocks * bands;
  for_each_item<Config>(d.N, oc_blocks, bands, copy_rows, fill_row, run_item,
                        std::max<Index>(1, items / (16 * schedule_of<Config>().threads)));
}

}  // namespace optune::kernels::cpu::conv_detail
