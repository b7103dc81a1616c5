// Conv2dConfig and DepthwiseConv2dConfig: the schedules of the CPU convolution kernels
// (conv2d.hpp, depthwise_conv2d.hpp) as plain structural structs, so a kernel takes one as a
// template argument and a tuned table holds it as a constexpr value, like GemmConfig. The knobs of
// the tuning spaces (kernels/src/cpu_conv2d_template.cpp, cpu_depthwise_conv2d_template.cpp) map
// one to one onto these fields. Conv2dDims is the runtime shape both kernels take.
#pragma once

#include <cstdint>

#include "optune/kernels/cpu/gemm_config.hpp"

namespace optune::kernels::cpu {

// NCHW input [N,C,H,W], OIHW filter [K, C, R, S] (depthwise: [C, 1, R, S]), NCHW output
// [N,K,P,Q]. The same extents as kernels::Conv2dShape, header-only for build-time consumers.
struct Conv2dDims {
  std::int64_t N = 1, C = 0, H = 0, W = 0, K = 0, R = 0, S = 0;
  std::int64_t stride = 1, pad = 0, dilation = 1;
  constexpr std::int64_t out_h() const { return (H + 2 * pad - dilation * (R - 1) - 1) / stride + 1; }
  constexpr std::int64_t out_w() const { return (W + 2 * pad - dilation * (S - 1) - 1) / stride + 1; }
  friend constexpr bool operator==(const Conv2dDims&, const Conv2dDims&) = default;
};

// Which loop over output tiles is outermost (each thread walks its share in this order).
enum class ConvLoopOrder : int {
  kOcOuter = 0,   // output-channel blocks outside rows: one block's packed filter stays in cache
  kRowOuter = 1,  // output rows outside channel blocks: one band of input rows stays in cache
};

// What the threads split.
enum class ConvParallel : int {
  kOuter = 0,  // the outer loop of loop_order: whole channel blocks or whole rows per thread
  kFused = 1,  // the fused (outer x inner) loop, scheduled dynamically: finer shares where the
               // outer loop is short, and no waiting on a thread the OS has descheduled
};

// How conv2d computes (conv2d.cpu picks one per layer shape: see cpu_conv2d_template.cpp).
enum class ConvAlgorithm : int {
  kDirect = 0,  // the register-tiled direct kernel on a channel-blocked copy (conv2d.hpp)
  kGemm = 1,    // out[K][P*Q] = filter[K][C*R*S] x columns[C*R*S][P*Q] on the GEMM kernel
                // (conv2d_gemm.hpp); the columns are packed from the image, never formed
};

struct Conv2dConfig {
  int lanes = 8;       // float32 SIMD lanes: 4 (SSE/NEON), 8 (AVX2), 16 (AVX-512)
  int oc_vectors = 2;  // output-channel block = oc_vectors * lanes (vectors of the register tile)
  int ic_block = 8;    // c of the kernel's NCHW[c]c input layout (channels padded to a multiple)
  int ow_block = 6;    // register tile along the output width
  int oh_block = 1;    // register tile along the output height
  bool unroll_kw = true;  // filter width as a compile-time constant (trip count known)
  ConvLoopOrder loop_order = ConvLoopOrder::kOcOuter;
  int threads = 1;
  ConvParallel parallel = ConvParallel::kOuter;
  // Layers on a kept NCHW[b]c layout only (conv2d_nchwc.hpp, conv2d_nchwc_pointwise.hpp): the
  // input channels one reduction pass covers, 0 = all of them. A pass adds onto the output the
  // earlier passes left, so that its chunk of the packed filter (ic_chunk * R * S * oc_vectors *
  // lanes floats) stays in L1 across the tiles of a band or row, like a GEMM's kc. A multiple of
  // lanes.
  int ic_chunk = 0;
  ConvAlgorithm algorithm = ConvAlgorithm::kDirect;
  // The GEMM path's schedule: its blocks (mc, nc, kc), micro-tile (mr, nr), loop order, unroll
  // and parallel loop. Lanes and threads come from the fields above; both operands are packed
  // (the filter once, with the weights). Only read when algorithm = kGemm.
  GemmConfig gemm = {};
  // The direct kernel's threads, loop_order and parallel are given at run time
  // (conv_detail::run_time_schedule), not by the fields above: one compiled candidate then serves
  // every config that differs from it only in them (the tuner compiles once and runs many).
  // Tuned tables leave it false.
  bool run_time_schedule = false;

  friend constexpr bool operator==(const Conv2dConfig&, const Conv2dConfig&) = default;
};

// The GemmConfig that conv2d's GEMM path runs for a Conv2dConfig.
constexpr GemmConfig conv2d_gemm_config(const Conv2dConfig& c) {
  GemmConfig g = c.gemm;
  g.lanes = c.lanes;
  g.threads = c.threads;
  g.pack_a = true;
  g.pack_b = true;
  return g;
}

// Why a config cannot be instantiated at all, or nullptr. (The register budget is a rule of the
// tuning space; here only what the kernel's code needs.)
constexpr const char* conv2d_config_error(const Conv2dConfig& c) {
  if (c.lanes != 4 && c.lanes != 8 && c.lanes != 16) return "lanes must be 4, 8 or 16";
  if (c.oc_vectors < 1 || c.oc_vectors > 4) return "oc_vectors must be in 1..4";
  if (c.ic_block < 1 || c.ic_block > 256) return "ic_block must be in 1..256";
  if (c.ow_block < 1 || c.ow_block > 32) return "ow_block must be in 1..32";
  if (c.oh_block < 1 || c.oh_block > 4) return "oh_block must be in 1..4";
  if (c.oh_block * c.ow_block * c.oc_vectors > 32) return "register tile over 32 vectors";
  if (c.threads < 1 || c.threads > 1024) return "threads must be in 1..1024";
  if (c.ic_chunk < 0 || c.ic_chunk % c.lanes != 0) return "ic_chunk must be 0 or a positive multiple of lanes";
  if (c.algorithm == ConvAlgorithm::kGemm) return gemm_config_error(conv2d_gemm_config(c));
  return nullptr;
}

// How depthwise conv2d computes (depthwise_conv2d.cpu picks one per layer shape).
enum class DepthwiseAlgorithm : int {
  kRows = 0,     // each NCHW plane a 2D stencil, vectors along the output width (depthwise_conv2d.hpp)
  kBlocked = 1,  // channel blocks in NCHW[c]c, vectors along channels (depthwise_conv2d_blocked.hpp)
};

struct DepthwiseConv2dConfig {
  int lanes = 8;          // float32 SIMD lanes: 4 (SSE/NEON), 8 (AVX2), 16 (AVX-512)
  int ow_vectors = 2;     // register tile along the output width, in vectors of output pixels
  int oh_block = 2;       // register tile along the output height, in rows
  bool unroll_kw = true;  // filter width as a compile-time constant (1, 3, 5, 7)
  int threads = 1;        // the threads split the (image, channel) planes, dynamically
  DepthwiseAlgorithm algorithm = DepthwiseAlgorithm::kRows;
  // kBlocked only (ow_vectors is unused there): the channel block in vectors (the c of
  // NCHW[c]c) and the register tile along the width in pixels; oh_block is shared.
  int c_vectors = 1;
  int ow_block = 8;

  friend constexpr bool operator==(const DepthwiseConv2dConfig&,
                                   const DepthwiseConv2dConfig&) = default;
};

constexpr const char* depthwise_conv2d_config_error(const DepthwiseConv2dConfig& c) {
  if (c.lanes != 4 && c.lanes != 8 && c.lanes != 16) return "lanes must be 4, 8 or 16";
  if (c.ow_vectors < 1 || c.ow_vectors > 8) return "ow_vectors must be in 1..8";
  if (c.oh_block < 1 || c.oh_block > 8) return "oh_block must be in 1..8";
  if (c.oh_block * c.ow_vectors > 32) return "register tile over 32 vectors";
  if (c.threads < 1 || c.threads > 1024) return "threads must be in 1..1024";
  if (c.c_vectors < 1 || c.c_vectors > 4) return "c_vectors must be in 1..4";
  if (c.ow_block < 1 || c.ow_block > 32) return "ow_block must be in 1..32";
  if (c.algorithm == DepthwiseAlgorithm::kBlocked && c.oh_block * c.ow_block * c.c_vectors > 32) {
    return "blocked register tile over 32 vectors";
  }
  return nullptr;
}

}  // namespace optune::kernels::cpu
