// The CPU conv2d templates' shared part (conv2d_template.hpp): the features the cost model learns
// from, for both algorithms, and the functions that read a config back (conv2d_config_from_view)
// and write it as C++ (conv2d_config_literal, conv2d_dims_literal).
#include "conv2d_template.hpp"

#include <cmath>

#include "optune/kernels/cpu/conv2d_config_view.hpp"
#include "optune/kernels/cpu/gemm_config_view.hpp"

namespace optune::kernels {
namespace cpu_conv2d {
namespace {

std::vector<std::pair<std::string, double>> direct_features(const Workload& workload, const DeviceInfo& device,
                                                            const Conv2dConfig& c) {
  const Conv2dShape& s = workload.conv();
  const VectorUnit unit = vector_unit(device);
  const double P = static_cast<double>(s.out_h()), Q = static_cast<double>(s.out_w());
  const double ob = c.oc_vectors * c.lanes, pixels = c.oh_block * c.ow_block;
  const double padded_c = static_cast<double>(ceil_div(s.C, c.ic_block) * c.ic_block);
  const double pass_c = c.ic_chunk > 0 ? std::min<double>(c.ic_chunk, padded_c) : padded_c;  // one reduction pass
  const double padded_k = static_cast<double>(ceil_div(s.K, static_cast<std::int64_t>(ob))) * ob;
  const double row_tiles = std::ceil(P / c.oh_block), col_tiles = std::ceil(Q / c.ow_block);
  // On a kept layout a row's last tile computes only the columns left (conv2d_nchwc.hpp).
  const bool kept_direct = workload.input_layout_block() != kLayoutNchw && !kept_pointwise(workload);
  const double computed_cols = kept_direct ? Q : col_tiles * c.ow_block;
  const double flops = workload.flops();
  const double oc_blocks = padded_k / ob;
  const double outer = s.N * (c.loop_order == ConvLoopOrder::kOcOuter ? oc_blocks : row_tiles);
  const double inner = c.loop_order == ConvLoopOrder::kOcOuter ? row_tiles : oc_blocks;
  const double units = c.parallel == ConvParallel::kOuter ? outer : outer * inner;
  const double per_thread = std::ceil(units / c.threads);
  const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
  const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
  const double input_rows = (c.oh_block - 1) * s.stride + (s.R - 1) * s.dilation + 1;
  const double input_cols = (c.ow_block - 1) * s.stride + (s.S - 1) * s.dilation + 1;
  return {
      {"fma_per_load", pixels * c.oc_vectors / (pixels + c.oc_vectors)},
      {"register_use", static_cast<double>(tile_registers(c.oh_block, c.ow_block, c.oc_vectors, c.lanes)) /
                           unit.registers},
      {"filter_block_over_l2", 4.0 * pass_c * s.R * s.S * ob / l2},
      {"tile_input_over_l1", 4.0 * c.ic_block * input_rows * input_cols / l1},
      {"channel_padding_waste", 1.0 - static_cast<double>(s.C) / padded_c},
      {"edge_waste", 1.0 - P * Q * static_cast<double>(s.K) / (row_tiles * c.oh_block * computed_cols * padded_k)},
      {"transform_floats_per_flop", s.N * padded_c * (s.H + 2 * s.pad) * (s.W + 2 * s.pad) / flops},
      {"load_imbalance", per_thread * c.threads / units - 1.0},
      {"threads_per_core", static_cast<double>(c.threads) / std::max(1, device.cores)},
      {"log2_flops_per_thread", std::log2(flops / c.threads)},
      {"is_gemm", 0.0},
  };
}

std::vector<std::pair<std::string, double>> gemm_features(const Workload& workload, const DeviceInfo& device,
                                                          const Conv2dConfig& c) {
  const Conv2dShape& s = workload.conv();
  const GemmConfig g = cpu::conv2d_gemm_config(c);
  const GemmExtents e = gemm_extents(s);
  const VectorUnit unit = vector_unit(device);
  const double M = static_cast<double>(e.M), N = static_cast<double>(e.N), depth = static_cast<double>(e.depth);
  const double flops = workload.flops(), vectors = static_cast<double>(g.nr) / g.lanes;
  const double mc = std::min<double>(g.mc, round_up(e.M, g.mr)), kc = std::min<double>(g.kc, depth);
  const double l1 = std::max<double>(1, static_cast<double>(device.l1d_bytes));
  const double l2 = std::max<double>(1, static_cast<double>(device.l2_bytes));
  const double tiles_m = std::ceil(M / g.mr), tiles_n = std::ceil(N / g.nr);
  const double units = g.parallel == cpu::ParallelLoop::kIc ? tiles_m : tiles_n;
  const double per_thread = std::ceil(units / g.threads);
  // B (the columns) is packed from the image once per row block with ic_pc_jc, else once.
  const double b_packs = g.loop_order == cpu::LoopOrder::kIcPcJc ? std::ceil(M / mc) : 1.0;
  return {
      {"fma_per_load", g.mr * vectors / (g.mr + vectors)},
      {"register_use", (g.mr * vectors + vectors + 1) / unit.registers},
      {"filter_block_over_l2", 4.0 * mc * kc / l2},
      {"tile_input_over_l1", 4.0 * kc * (g.mr + g.nr) / l1},
      {"channel_padding_waste", 1.0 - M / (tiles_m * g.mr)},
      {"edge_waste", 1.0 - M * N / (tiles_m * g.mr * tiles_n * g.nr)},
      {"transform_floats_per_flop", depth * N * b_packs / flops},
      {"load_imbalance", per_thread * g.threads / units - 1.0},
      {"threads_per_core", static_cast<double>(g.threads) / std::max(1, device.cores)},
      {"log2_flops_per_thread", std::log2(flops / g.threads)},
      {"is_gemm", 1.0},
  };
}

}  // namespace

  // The same names for both algorithms (the cost model learns across the layers of a
  // template): register-tile intensity, footprints against the caches, layout, packing and
  // padding overheads, edge waste and load balance.
std::vector<std::pair<std::string, double>> CpuConv2dTemplate::derived_features(
    const Workload& workload, const DeviceInfo& device, const ss::ConfigView& config) const {
    const Conv2dConfig c = cpu::conv2d_config_from_view(config);
    return c.algorithm == ConvAlgorithm::kGemm ? gemm_features(workload, device, c)
                                               : direct_features(workload, device, c);
  }


}  // namespace cpu_conv2d

namespace cpu {

using namespace cpu_conv2d;

Conv2dConfig conv2d_config_from_view(const search_space::ConfigView& v) {
  Conv2dConfig c;
  c.lanes = parse_int(v.choice(kLanes));
  c.threads = static_cast<int>(v.integer(kThreads));
  if (v.choice(kAlgorithm) == kAlgorithmNames[1]) {
    c.algorithm = ConvAlgorithm::kGemm;
    c.gemm.mr = static_cast<int>(v.integer(kGemmMr));
    c.gemm.nr = static_cast<int>(v.integer(kGemmNr));
    c.gemm.mc = parse_int(v.choice(kGemmMc));
    c.gemm.nc = parse_int(v.choice(kGemmNc));
    c.gemm.kc = parse_int(v.choice(kGemmKc));
    c.gemm.unroll = parse_int(v.choice(kGemmUnrollK));
    const auto& orders = kGemmLoopOrderNames;
    c.gemm.loop_order = static_cast<cpu::LoopOrder>(std::find(orders.begin(), orders.end(), v.choice(kGemmLoopOrder)) -
                                                    orders.begin());
    const auto& loops = kGemmParallelNames;
    c.gemm.parallel = static_cast<cpu::ParallelLoop>(
        std::find(loops.begin(), loops.end(), v.choice(kGemmParallelLoop)) - loops.begin());
    c.gemm = conv2d_gemm_config(c);
    return c;
  }
  c.oc_vectors = static_cast<int>(v.integer(kOcVectors));
  c.ic_block = parse_int(v.choice(kIcBlock));
  c.ow_block = static_cast<int>(v.integer(kOwBlock));
  c.oh_block = static_cast<int>(v.integer(kOhBlock));
  c.unroll_kw = v.flag(kUnrollKw);
  const auto order = std::find(kLoopOrderNames.begin(), kLoopOrderNames.end(), v.choice(kLoopOrder));
  c.loop_order = static_cast<ConvLoopOrder>(order - kLoopOrderNames.begin());
  const auto parallel = std::find(kParallelNames.begin(), kParallelNames.end(), v.choice(kParallel));
  c.parallel = static_cast<ConvParallel>(parallel - kParallelNames.begin());
  if (v.has(kIcChunk)) c.ic_chunk = ic_chunk_value(v.choice(kIcChunk));
  return c;
}

std::string conv2d_config_literal(const Conv2dConfig& c) {
  static const char* const kOrders[] = {"kOcOuter", "kRowOuter"};
  static const char* const kSplits[] = {"kOuter", "kFused"};
  auto i = [](int x) { return std::to_string(x); };
  if (c.algorithm == ConvAlgorithm::kGemm) {  // the direct kernel's fields keep their defaults
    return "optune::kernels::cpu::Conv2dConfig{.lanes = " + i(c.lanes) + ", .threads = " + i(c.threads) +
           ", .algorithm = optune::kernels::cpu::ConvAlgorithm::kGemm, .gemm = " +
           gemm_config_literal(conv2d_gemm_config(c)) + "}";
  }
  return "optune::kernels::cpu::Conv2dConfig{.lanes = " + i(c.lanes) +
         ", .oc_vectors = " + i(c.oc_vectors) + ", .ic_block = " + i(c.ic_block) +
         ", .ow_block = " + i(c.ow_block) + ", .oh_block = " + i(c.oh_block) +
         ", .unroll_kw = " + (c.unroll_kw ? "true" : "false") +
         ", .loop_order = optune::kernels::cpu::ConvLoopOrder::" +
         kOrders[static_cast<int>(c.loop_order)] + ", .threads = " + i(c.threads) +
         ", .parallel = optune::kernels::cpu::ConvParallel::" + kSplits[static_cast<int>(c.parallel)] +
         (c.ic_chunk > 0 ? ", .ic_chunk = " + i(c.ic_chunk) : "") +
         (c.run_time_schedule ? ", .run_time_schedule = true" : "") + "}";
}

Conv2dDims conv2d_dims(const Workload& workload) {
  const Conv2dShape& s = workload.conv();
  const std::int64_t K = workload.op == Op::kDepthwiseConv2d ? s.C : s.K;
  return Conv2dDims{s.N, s.C, s.H, s.W, K, s.R, s.S, s.stride, s.pad, s.dilation};
}

std::string conv2d_dims_literal(const Conv2dDims& d) {
  auto i = [](std::int64_t x) { return std::to_string(x); };
  return "optune::kernels::cpu::Conv2dDims{.N = " + i(d.N) + ", .C = " + i(d.C) + ", .H = " +
         i(d.H) + ", .W = " + i(d.W) + ", .K = " + i(d.K) + ", .R = " + i(d.R) + ", .S = " +
         i(d.S) + ", .stride = " + i(d.stride) + ", .pad = " + i(d.pad) +
         ", .dilation = " + i(d.dilation) + "}";
}

}  // namespace cpu
}  // namespace optune::kernels
