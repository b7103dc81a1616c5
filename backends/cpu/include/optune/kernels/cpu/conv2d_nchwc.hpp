// conv2d on the channel-blocked activation layout NCHW[b]c (layout.hpp), kept between the layers
// of a network: input [N][ceil(C/b)][H][W][b], output [N][ceil(K/b)][P][Q][b], b = Config.lanes,
// the filter packed by conv2d_pack_filter<Config> as for the NCHW kernel (conv2d.hpp). The blocked
// input already is the direct kernel's channel-blocked image (ic_block = b), so there is no
// layout transform in the call. 1x1 layers without padding (MobileNet's pointwise layers,
// ResNet's strided downsamples) run a path of their own, a GEMM over the pixels of a plane
// (conv2d_nchwc_pointwise.hpp). What the tiles of the others read:
//   - pad > 0: a zero-padded copy, one row memcpy per (image, channel block, row), small next to
//     the convolution it feeds;
//   - else (unpadded 3x3, ...): the input in place. A tile at the right or bottom edge reads past
//     its row into the next row or channel block, inside the tensor, for output pixels whose
//     stores are clipped; the few tiles at the very end of the tensor whose reads would leave it
//     read a zero-extended copy of their input window instead.
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
#include "optune/kernels/cpu/conv2d_nchwc_pointwise.hpp"
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

// An unpadded blocked image, as the tiles of conv2d_nchwc_run see it: planes of `pixels` pixels
// in rows of `row_pixels`. Row h holds the pixels from h * row_pixels to the plane's end or the
// row's, whichever comes first.
struct PlaneView {
  Index pixels = 0, row_pixels = 0;
  // Pixels of row h from column w0 on, at most `limit`.
  Index valid(Index h, Index w0, Index limit) const {
    return std::clamp<Index>(std::min(row_pixels, pixels - h * row_pixels) - w0, 0, limit);
  }
};

// The input window of one tile (rows [h0, h0 + window.height) and columns [w0, w0 + window.width)
// of every channel block of `image`, zero outside it) into `dst`: a blocked image of its own,
// whose geometry the tile reads instead of the tensor's.
template <int Block>
void copy_window(const PlaneView& plane, const float* __restrict image, Index h0, Index w0,
                 const BlockedImage& window, float* __restrict dst) {
  for (Index cb = 0; cb < window.channel_blocks; ++cb) {
    for (Index r = 0; r < window.height; ++r) {
      float* row = dst + cb * window.plane_floats() + r * window.row_floats();
      const Index valid = plane.valid(h0 + r, w0, window.width);
      const float* src = image + (cb * plane.pixels + (h0 + r) * plane.row_pixels + w0) * Block;
      if (valid > 0) std::memcpy(row, src, sizeof(float) * valid * Block);
      std::fill_n(row + valid * Block, (window.width - valid) * Block, 0.0f);
    }
  }
}

// One register tile computed (conv_tile) and stored into an NCHW[L]c output: `out` is the tile's
// first pixel in its first output-channel block, `plane` the output plane's pixels as the tiles
// walk them (rows of plane.row_pixels), (oh0, ow0) the tile's place there, `vectors` the layout
// blocks of the output this tile holds (fewer than OCV at the last block). A whole tile's vectors
// go straight into the output; a clipped one goes through a scratch tile. Accumulate adds onto
// the output (a later reduction pass).
template <int L, int OCV, int IB, int OWB, int OHB, int FixedS, int FixedStride, bool Accumulate = false>
void blocked_output_tile(const float* in, const float* filter, const TileGeometry& g, float* out,
                         const PlaneView& plane, Index oh0, Index ow0, Index vectors) {
  constexpr int OB = OCV * L;
  const Index plane_floats = plane.pixels * L, Q = plane.row_pixels;
  if (plane.valid(oh0 + OHB - 1, ow0, OWB) == OWB && vectors == OCV) {
    conv_tile<L, OCV, IB, OWB, OHB, FixedS, FixedStride, Accumulate>(in, filter, g, out, {Q * L, L, plane_floats});
    return;
  }
  alignas(64) float tile[OHB * OWB * OB];
  // Copies the tile's valid vectors between the scratch tile and the output.
  auto for_each_valid = [&](const auto& copy) {
    for (Index v = 0; v < vectors; ++v) {
      for (Index h = 0; h < OHB; ++h) {
        const Index cols = plane.valid(oh0 + h, ow0, OWB);
        for (Index j = 0; j < cols; ++j) copy(out + v * plane_floats + (h * Q + j) * L, tile + (h * OWB + j) * OB + v * L);
      }
    }
  };
  if constexpr (Accumulate) {
    std::fill_n(tile, OHB * OWB * OB, 0.0f);
    for_each_valid([](const float* o, float* t) { std::memcpy(t, o, sizeof(float) * L); });
  }
  conv_tile<L, OCV, IB, OWB, OHB, FixedS, FixedStride, Accumulate>(in, filter, g, tile, {OWB * OB, OB, L});
  for_each_valid([](float* o, const float* t) { std::memcpy(o, t, sizeof(float) * L); });
}

// With Config.ic_chunk > 0 the tiles of an item (image, output-channel block, band of rows)
// reduce over the input channels in passes of ic_chunk channels: a pass's chunk of the packed
// filter (ic_chunk * R * S * oc_vectors * lanes floats) stays in cache across the band's tiles,
// where the whole filter block is read from L3 by every tile on deep layers (C = 512 with 3x3
// filters and 4 vectors: 576 KiB), as oneDNN's AVX2 kernels block their input channels.
template <Conv2dConfig Config, int FixedS, int FixedStride>
void conv2d_nchwc_run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr int L = Config.lanes, OCV = Config.oc_vectors, OB = OCV * L;
  constexpr int OWB = Config.ow_block, OHB = Config.oh_block;
  const Index in_blocks = ceil_div(d.C, L), out_blocks = ceil_div(d.K, L);
  const Index filter_block_floats = in_blocks * d.R * d.S * L * OB;
  const Index chunk_blocks = Config.ic_chunk > 0 ? std::min<Index>(in_blocks, Config.ic_chunk / L) : in_blocks;
  const Index passes = ceil_div(in_blocks, chunk_blocks);

  // What the tiles read: a zero-padded copy where pad > 0, else the input itself.
  const bool padded = d.pad > 0;
  const Index Q = d.out_w();
  const PlaneView out_plane{d.out_h() * Q, Q}, in_plane{d.H * d.W, d.W};
  // The source's planes (unpadded: one plane-long row here; the tiles' rows are g.row_floats).
  const BlockedImage b = padded ? blocked_image(d, L, OHB, OWB) : BlockedImage{in_blocks, L, 1, in_plane.pixels};
  thread_local AlignedBuffer copy_buffer;  // the calling thread's; its team shares it
  const Index copy_rows = padded ? d.N * in_blocks * b.height : 0;
  float* copy = padded ? copy_buffer.reserve(static_cast<std::size_t>(d.N * b.floats())) : nullptr;
  const float* source = padded ? copy : input;
  const TileGeometry g{in_blocks, d.R, d.S, d.stride, d.dilation, padded ? b.row_floats() : d.W * L,
                       b.plane_floats()};

  // A tile whose reads would run past the end of an unpadded source reads a copy of its window.
  const BlockedImage window = tile_window(d, in_blocks, L, OHB, OWB);
  const TileGeometry window_g = tile_geometry(d, window);
  const Index tile_reach = (in_blocks - 1) * g.plane_floats + (window.height - 1) * g.row_floats +
                           window.width * L;  // floats from a tile's first input pixel to its last read, + 1
  const float* source_end = source + d.N * b.floats();

  auto fill_row = [&](Index row) {
    const Index n = row / (in_blocks * b.height), rest = row % (in_blocks * b.height);
    copy_padded_row<L>(d, b, input + n * in_blocks * d.H * d.W * L, rest / b.height, rest % b.height,
                       copy + row * b.row_floats());
  };
  // The tile of Width columns at (n, kb, rt, column ow0): its share of reduction pass `pass`.
  auto run_tile = [&]<int Width, bool Accumulate>(Index n, Index kb, Index rt, Index ow0, Index pass) {
    const Index oh0 = rt * OHB;
    const float* in = source + n * b.floats() + (oh0 * g.row_floats + ow0 * L) * d.stride;
    TileGeometry geometry = g;
    if (!padded && in + tile_reach > source_end) {
      thread_local AlignedBuffer window_buffer;  // each thread's own
      float* window_copy = window_buffer.reserve(static_cast<std::size_t>(window.floats()));
      copy_window<L>(in_plane, source + n * b.floats(), oh0 * d.stride, ow0 * d.stride, window, window_copy);
      in = window_copy;
      geometry = window_g;
    }
    const Index cb0 = pass * chunk_blocks;
    in += cb0 * geometry.plane_floats;
    geometry.channel_blocks = std::min(chunk_blocks, in_blocks - cb0);
    const float* filter = packed_filter + kb * filter_block_floats + cb0 * d.R * d.S * L * OB;
    float* out = output + (n * out_blocks + kb * OCV) * out_plane.pixels * L + (oh0 * Q + ow0) * L;
    blocked_output_tile<L, OCV, L, Width, OHB, FixedS, FixedStride, Accumulate>(
        in, filter, geometry, out, out_plane, oh0, ow0, std::min<Index>(OCV, out_blocks - kb * OCV));
  };
  // A row's tiles, the last one (when Q is not a multiple of OWB) on the micro-kernel made for the
  // columns left: through a whole-width tile it computed up to OWB - 1 columns for nothing (2 of 9
  // on a 7-wide plane in tiles of 3).
  const Index whole_columns = Q / OWB * OWB;
  auto run_row = [&]<bool Accumulate>(Index n, Index kb, Index rt, Index pass) {
    for (Index ow0 = 0; ow0 < whole_columns; ow0 += OWB) {
      run_tile.template operator()<OWB, Accumulate>(n, kb, rt, ow0, pass);
    }
    if constexpr (OWB > 1) {
      if (whole_columns < Q) {
        with_constant<OWB - 1>(Q - whole_columns, [&]<int Width>() {
          run_tile.template operator()<Width, Accumulate>(n, kb, rt, whole_columns, pass);
        });
      }
    }
  };
  const Index oc_blocks = ceil_div(d.K, OB), row_tiles = ceil_div(d.out_h(), OHB);
  if constexpr (Config.ic_chunk == 0) {
    for_each_item<Config>(d.N, oc_blocks, row_tiles, copy_rows, fill_row,
                          [&](Index n, Index kb, Index rt) { run_row.template operator()<false>(n, kb, rt, 0); });
  } else {
    // Items are bands of rows, each pass over a whole band, so that a pass's filter chunk serves
    // all of the band's tiles (a 7-wide plane has 3 a row); as many rows a band as leave 4 items
    // a thread.
    const Index bands = std::min(row_tiles, ceil_div(4 * schedule_of<Config>().threads, d.N * oc_blocks));
    const Index band_rows = ceil_div(row_tiles, bands);
    for_each_item<Config>(d.N, oc_blocks, ceil_div(row_tiles, band_rows), copy_rows, fill_row,
                          [&](Index n, Index kb, Index band) {
                            const Index first = band * band_rows, last = std::min(row_tiles, first + band_rows);
                            for (Index rt = first; rt < last; ++rt) run_row.template operator()<false>(n, kb, rt, 0);
                            for (Index pass = 1; pass < passes; ++pass) {
                              for (Index rt = first; rt < last; ++rt) run_row.template operator()<true>(n, kb, rt, pass);
                            }
                          });
  }
}

// A network's first layer: an NCHW input (the image) copied into the channel-blocked image as
// conv2d_run does (ic_block channels a block, e.g. 1 or 4 for RGB: no need to pad 3 channels to
// the layout's block), tiles stored into the NCHW[lanes]c output the next layers read.
template <Conv2dConfig Config, int FixedS, int FixedStride>
void conv2d_nchw_to_nchwc_run(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  constexpr int L = Config.lanes, OCV = Config.oc_vectors, IB = Config.ic_block;
  const Index Q = d.out_w(), out_blocks = ceil_div(d.K, L);
  const PlaneView plane{d.out_h() * Q, Q};
  blocked_copy_run<Config>(d, input, packed_filter,
                           [&](const float* image, const float* filter, const TileGeometry& g, Index n, Index kb,
                               Index oh0, Index ow0) {
                             float* out = output + (n * out_blocks + kb * OCV) * plane.pixels * L + (oh0 * Q + ow0) * L;
                             blocked_output_tile<L, OCV, IB, Config.ow_block, Config.oh_block, FixedS, FixedStride>(
                                 image, filter, g, out, plane, oh0, ow0, std::min<Index>(OCV, out_blocks - kb * OCV));
                           });
}

}  // namespace conv_detail

// output = conv2d(input, filter) on NCHW[Config.lanes]c tensors, the filter packed by
// conv2d_pack_filter<Config>. Input channels past C (in the last block) may hold any finite value;
// output channels past K are written as zeros. FixedS and FixedStride as for conv2d_packed.
template <Conv2dConfig Config, int FixedS = -1, int FixedStride = -1>
void conv2d_nchwc_packed(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  static_assert(conv2d_config_error(Config) == nullptr, "invalid Conv2dConfig");
  static_assert(Config.lanes <= kMaxLanes,
                "Conv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  static_assert(Config.algorithm == ConvAlgorithm::kDirect,
                "conv2d_nchwc runs the direct algorithm only (Conv2dConfig::algorithm = kDirect)");
  static_assert(Config.ic_block == Config.lanes,
                "conv2d_nchwc needs ic_block == lanes: the NCHW[lanes]c input is the kernel's blocked image");
  if constexpr (FixedS <= 1) {  // (a candidate with a wider filter has no pointwise layer)
    if (d.R == 1 && d.S == 1 && d.pad == 0) {
      return conv_detail::conv2d_nchwc_pointwise_run<Config>(d, input, packed_filter, output);
    }
  }
  conv_detail::with_filter_width_and_stride<Config.unroll_kw, FixedS, FixedStride>(
      d.S, d.stride, [&]<int S, int Stride>() {
        conv_detail::conv2d_nchwc_run<Config, S, Stride>(d, input, packed_filter, output);
      });
}

// One call that packs the filter (into a per-thread buffer) and convolves, like conv2d().
template <Conv2dConfig Config>
void conv2d_nchwc(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(conv2d_packed_filter_size<Config>(d));
  conv2d_pack_filter<Config>(d, filter, buffer);
  conv2d_nchwc_packed<Config>(d, input, buffer, output);
}

// NCHW[Config.lanes]c output = conv2d(NCHW input, filter packed by conv2d_pack_filter<Config>): a
// network's first layer, reading the image and writing the layout the network keeps (as
// oneDNN's first layer does). Output channels past K are written as zeros. FixedS and FixedStride
// as for conv2d_packed.
template <Conv2dConfig Config, int FixedS = -1, int FixedStride = -1>
void conv2d_nchw_to_nchwc_packed(const Conv2dDims& d, const float* input, const float* packed_filter, float* output) {
  static_assert(conv2d_config_error(Config) == nullptr, "invalid Conv2dConfig");
  static_assert(Config.lanes <= kMaxLanes,
                "Conv2dConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  static_assert(Config.algorithm == ConvAlgorithm::kDirect,
                "conv2d_nchw_to_nchwc runs the direct algorithm only (Conv2dConfig::algorithm = kDirect)");
  conv_detail::with_filter_width_and_stride<Config.unroll_kw, FixedS, FixedStride>(
      d.S, d.stride, [&]<int S, int Stride>() {
        conv_detail::conv2d_nchw_to_nchwc_run<Config, S, Stride>(d, input, packed_filter, output);
      });
}

// One call that packs the filter (into a per-thread buffer) and convolves, like conv2d().
template <Conv2dConfig Config>
void conv2d_nchw_to_nchwc(const Conv2dDims& d, const float* input, const float* filter, float* output) {
  thread_local AlignedBuffer packed;
  float* buffer = packed.reserve(conv2d_packed_filter_size<Config>(d));
  conv2d_pack_filter<Config>(d, filter, buffer);
  conv2d_nchw_to_nchwc_packed<Config>(d, input, buffer, output);
}

}  // namespace optune::kernels::cpu
