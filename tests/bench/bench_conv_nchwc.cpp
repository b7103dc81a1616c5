// bench_conv_nchwc: conv2d on the kept NCHW[16|8]c layout (16 with AVX-512) (conv2d_nchwc.hpp) against the NCHW path
// (conv2d.hpp, the layout transform inside the call) with the same hand-picked configs, and
// oneDNN's convolution primitive on its own blocked layouts (format_tag::any, only the primitive
// timed), in one run, on MobileNet's pointwise layers pw1, pw2, pw5, pw7, pw13, ResNet-18's 1x1
// stride-2 downsamples and its 3x3 layers (ic_chunk: reduction passes over bands of rows on the
// kept layout; the NCHW path ignores it). Filters are packed (and oneDNN's weights reordered)
// before timing.
//
//   build/tests/bench/bench_conv_nchwc [--rounds 200] [--layers pw1,pw5,...]
//
// Every implementation runs once per round, round-robin (the machine is shared and noisy); the
// report gives the median and the 10th percentile of each over all rounds, per layer the best
// config of each optune path, and the ratio oneDNN median / median.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/conv2d.hpp"
#include "optune/kernels/cpu/conv2d_nchwc.hpp"
#include "optune/kernels/layout.hpp"

namespace {

using namespace optune::kernels::cpu;
using optune::kernels::nchw_to_nchwc;
using optune::kernels::nchwc_size;
using optune::kernels::nchwc_to_nchw;
using Order = ConvLoopOrder;
using Split = ConvParallel;

// The layout oneDNN picks: nChw16c with AVX-512, nChw8c with AVX2.
constexpr int kBlock = kMaxLanes >= 16 ? 16 : 8;
constexpr Conv2dConfig config(int ocv, int owb, int ohb, Order order, Split split, int ic_chunk = 0) {
  return Conv2dConfig{kBlock, ocv, kBlock, owb, ohb, true, order, 2, split, ic_chunk};
}
// AVX2: register tiles of 12 accumulators (16 registers), each loop order and split.
constexpr std::array kAvx2Configs = {
    config(2, 6, 1, Order::kRowOuter, Split::kOuter), config(2, 6, 1, Order::kRowOuter, Split::kFused),
    config(2, 6, 1, Order::kOcOuter, Split::kOuter),  config(3, 4, 1, Order::kRowOuter, Split::kOuter),
    config(3, 4, 1, Order::kRowOuter, Split::kFused), config(2, 3, 2, Order::kRowOuter, Split::kFused),
    config(2, 3, 2, Order::kOcOuter, Split::kOuter),
    // ic_chunk (pointwise layers only): reduction passes of 64 or 128 input channels
    config(2, 6, 1, Order::kRowOuter, Split::kOuter, 64), config(2, 6, 1, Order::kOcOuter, Split::kOuter, 64),
    config(3, 4, 1, Order::kRowOuter, Split::kOuter, 128), config(3, 4, 1, Order::kOcOuter, Split::kFused, 128),
    config(1, 12, 1, Order::kRowOuter, Split::kOuter), config(2, 6, 1, Order::kRowOuter, Split::kFused, 64),
    // conv2d.cpu's old default on a kept layout (its new one for pointwise layers: config 0 on planes of 4
    // bands per thread or more, else config 1)
    config(2, 6, 1, Order::kOcOuter, Split::kFused),
    // 3x3 layers on a kept layout: the hand-scheduled 3 x 4 tile with passes of 64 channels (their
    // default), the 4 x 3 tile (no waste on 7-wide planes) likewise, and the 3 x 4 tile in one pass
    config(4, 3, 1, Order::kOcOuter, Split::kFused, 64), config(3, 4, 1, Order::kOcOuter, Split::kFused, 64),
    config(4, 3, 1, Order::kOcOuter, Split::kFused),
};
// AVX-512 (32 registers): tiles of 24-28 accumulators, in one pass or in passes of 64 or 128
// input channels.
constexpr std::array kAvx512Configs = {
    config(2, 12, 1, Order::kOcOuter, Split::kFused),       config(2, 12, 1, Order::kOcOuter, Split::kFused, 64),
    config(2, 14, 1, Order::kOcOuter, Split::kFused, 64),   config(4, 6, 1, Order::kOcOuter, Split::kFused),
    config(4, 6, 1, Order::kOcOuter, Split::kFused, 64),    config(4, 6, 1, Order::kOcOuter, Split::kFused, 128),
    config(4, 7, 1, Order::kOcOuter, Split::kFused, 64),    config(3, 8, 1, Order::kOcOuter, Split::kFused, 64),
    config(4, 3, 2, Order::kOcOuter, Split::kFused, 64),    config(2, 12, 1, Order::kRowOuter, Split::kOuter),
    config(2, 12, 1, Order::kRowOuter, Split::kOuter, 64),  config(4, 6, 1, Order::kRowOuter, Split::kOuter, 128),
    config(1, 24, 1, Order::kRowOuter, Split::kOuter),
};
constexpr auto kConfigs = [] {
  if constexpr (kBlock == 16) {
    return kAvx512Configs;
  } else {
    return kAvx2Configs;
  }
}();
const std::string kLayoutName = "nchw" + std::to_string(kBlock) + "c";

using ConvFunction = void (*)(const Conv2dDims&, const float*, const float*, float*);
template <std::size_t I>
void nchw(const Conv2dDims& d, const float* in, const float* f, float* out) {
  conv2d_packed<kConfigs[I]>(d, in, f, out);
}
template <std::size_t I>
void nchwc(const Conv2dDims& d, const float* in, const float* f, float* out) {
  conv2d_nchwc_packed<kConfigs[I]>(d, in, f, out);
}
template <std::size_t I>
std::vector<float> packed_filter(const Conv2dDims& d, const std::vector<float>& filter) {
  std::vector<float> packed(conv2d_packed_filter_size<kConfigs[I]>(d));
  conv2d_pack_filter<kConfigs[I]>(d, filter.data(), packed.data());
  return packed;
}

struct Implementation {
  std::string name;
  std::function<void()> run;
  std::vector<double> ms;  // one per round, sorted once the rounds are done
  double quantile(double q) const { return ms[static_cast<std::size_t>(q * (ms.size() - 1))]; }
};

// oneDNN's convolution primitive on the layouts it picks, operands reordered beforehand.
struct OneDnnPrimitive {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward primitive;
  dnnl::memory src, weights, dst;
  std::string implementation;

  OneDnnPrimitive(const Conv2dDims& d, std::vector<float>& input, std::vector<float>& filter) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::dims src_dims = {d.N, d.C, d.H, d.W}, weight_dims = {d.K, d.C, d.R, d.S},
                             dst_dims = {d.N, d.K, d.out_h(), d.out_w()};
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, {src_dims, dt::f32, tag::any},
        {weight_dims, dt::f32, tag::any}, {dst_dims, dt::f32, tag::any}, {d.stride, d.stride},
        {d.dilation - 1, d.dilation - 1}, {d.pad, d.pad}, {d.pad, d.pad});
    dnnl::convolution_forward::primitive_desc pd(desc, engine);
    implementation = pd.impl_info_str();
    primitive = dnnl::convolution_forward(pd);
    src = dnnl::memory(pd.src_desc(), engine);
    weights = dnnl::memory(pd.weights_desc(), engine);
    dst = dnnl::memory(pd.dst_desc(), engine);
    dnnl::memory user_src({src_dims, dt::f32, tag::nchw}, engine, input.data());
    dnnl::memory user_weights({weight_dims, dt::f32, tag::oihw}, engine, filter.data());
    dnnl::reorder(user_src, src).execute(stream, user_src, src);
    dnnl::reorder(user_weights, weights).execute(stream, user_weights, weights);
    stream.wait();
  }
  void run() {
    primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    stream.wait();
  }
};

template <std::size_t... I>
void bench_layer(const char* name, const Conv2dDims& d, int rounds, std::index_sequence<I...>) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> input(d.N * d.C * d.H * d.W), filter(d.K * d.C * d.R * d.S);
  for (float& x : input) x = value(rng);
  for (float& x : filter) x = value(rng);
  const std::int64_t P = d.out_h(), Q = d.out_w();
  std::vector<float> blocked_input(nchwc_size(d.N, d.C, d.H, d.W, kBlock));
  nchw_to_nchwc(input.data(), d.N, d.C, d.H, d.W, kBlock, blocked_input.data());
  std::vector<float> output(d.N * d.K * P * Q), blocked_output(nchwc_size(d.N, d.K, P, Q, kBlock));
  const std::vector<std::vector<float>> packed = {packed_filter<I>(d, filter)...};
  constexpr ConvFunction nchw_functions[] = {&nchw<I>...}, nchwc_functions[] = {&nchwc<I>...};

  OneDnnPrimitive onednn(d, input, filter);
  std::vector<Implementation> implementations;
  implementations.push_back({"oneDNN " + onednn.implementation, [&] { onednn.run(); }, {}});
  for (std::size_t i = 0; i < kConfigs.size(); ++i) {
    implementations.push_back({"NCHW config " + std::to_string(i),
                               [&, i] { nchw_functions[i](d, input.data(), packed[i].data(), output.data()); }, {}});
    implementations.push_back(
        {kLayoutName + " config " + std::to_string(i),
         [&, i] { nchwc_functions[i](d, blocked_input.data(), packed[i].data(), blocked_output.data()); }, {}});
  }
  for (Implementation& implementation : implementations) implementation.run();  // warm up
  for (int round = 0; round < rounds; ++round) {
    for (Implementation& implementation : implementations) {
      const auto start = std::chrono::steady_clock::now();
      implementation.run();
      implementation.ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  }

  for (Implementation& implementation : implementations) std::sort(implementation.ms.begin(), implementation.ms.end());
  const double gflop = 2e-9 * d.N * d.K * d.C * d.R * d.S * P * Q, reference = implementations[0].quantile(0.5);
  std::printf("\n%s  N%ld C%ld H%ld W%ld K%ld R%ld S%ld stride %ld pad %ld  (%.3f GFLOP)\n", name, d.N, d.C, d.H, d.W,
              d.K, d.R, d.S, d.stride, d.pad, gflop);
  std::printf("  %-34s %10s %10s %9s %7s\n", "implementation", "median ms", "p10 ms", "GFLOP/s", "ratio");
  const Implementation* best[2] = {nullptr, nullptr};
  for (const Implementation& m : implementations) {
    const double median = m.quantile(0.5);
    std::printf("  %-34s %10.4f %10.4f %9.1f %6.2fx\n", m.name.c_str(), median, m.quantile(0.1), gflop / median * 1e3,
                reference / median);
    if (m.name.starts_with("oneDNN")) continue;
    const Implementation*& b = best[m.name.starts_with(kLayoutName) ? 1 : 0];
    if (b == nullptr || median < b->quantile(0.5)) b = &m;
  }
  for (const Implementation* b : best) {
    const double median = b->quantile(0.5);
    std::printf("  best %-29s %10.4f %21s %6.2fx\n", b->name.c_str(), median, "", reference / median);
  }
}

}  // namespace

// ",name," for a search in the comma-fenced list; appended piece by piece because GCC 12 warns
// (-Wrestrict, falsely) on "," + std::string(...) + ",".
std::string fenced(const char* name) {
  std::string text = ",";
  text += name;
  text += ',';
  return text;
}

int main(int argc, char** argv) {
  int rounds = 200;
  std::string only;  // comma-separated layer names, empty: all
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--layers") only = fenced(argv[i + 1]);
  }
  std::printf("configs (lanes %d, ic_block %d, 2 threads):\n", kBlock, kBlock);
  for (std::size_t i = 0; i < kConfigs.size(); ++i) {
    const Conv2dConfig& c = kConfigs[i];
    std::printf("  %zu: oc_vectors %d, ow_block %d, oh_block %d, %s, %s, ic_chunk %d\n", i, c.oc_vectors, c.ow_block,
                c.oh_block, c.loop_order == Order::kOcOuter ? "oc outer" : "row outer",
                c.parallel == Split::kOuter ? "outer split" : "fused split", c.ic_chunk);
  }
  const std::pair<const char*, Conv2dDims> layers[] = {
      {"pw1", {1, 32, 112, 112, 64, 1, 1, 1, 0, 1}},
      {"pw2", {1, 64, 56, 56, 128, 1, 1, 1, 0, 1}},
      {"pw5", {1, 256, 28, 28, 256, 1, 1, 1, 0, 1}},
      {"pw7", {1, 512, 14, 14, 512, 1, 1, 1, 0, 1}},
      {"pw13", {1, 1024, 7, 7, 1024, 1, 1, 1, 0, 1}},
      {"layer2.0.downsample", {1, 64, 56, 56, 128, 1, 1, 2, 0, 1}},
      {"layer3.0.downsample", {1, 128, 28, 28, 256, 1, 1, 2, 0, 1}},
      {"layer4.0.downsample", {1, 256, 14, 14, 512, 1, 1, 2, 0, 1}},
      {"layer1.conv3x3", {1, 64, 56, 56, 64, 3, 3, 1, 1, 1}},
      {"layer2.conv3x3", {1, 128, 28, 28, 128, 3, 3, 1, 1, 1}},
      {"layer3.conv3x3", {1, 256, 14, 14, 256, 3, 3, 1, 1, 1}},
      {"layer4.0.conv1", {1, 256, 14, 14, 512, 3, 3, 2, 1, 1}},
      {"layer4.conv3x3", {1, 512, 7, 7, 512, 3, 3, 1, 1, 1}},
  };
  const auto configs = std::make_index_sequence<kConfigs.size()>{};
  for (const auto& [name, dims] : layers) {
    if (only.empty() || only.find(fenced(name)) != std::string::npos) {
      bench_layer(name, dims, rounds, configs);
    }
  }
}
