// bench_depthwise_nchwc: depthwise conv2d on the kept NCHW8c layout (depthwise_conv2d_nchwc.hpp)
// against today's NCHW path of the same channel-blocked kernel (depthwise_conv2d_packed with
// algorithm kBlocked: the layout transform fused into every call) and against oneDNN's primitive
// on its own blocked layout (source and destination nChw8c, weights in the primitive's format),
// on MobileNet v1's depthwise layers, in one run.
//
//   build/tests/bench/bench_depthwise_nchwc [--rounds 5] [--threads 2] [--layers dw1,dw13]
//
// Each optune config below runs on both paths; each row reports its median (ms) over all
// repeats. Implementations run round-robin in blocks of ~1 ms, for several rounds (the machine
// is shared); only the kernel call is timed (filters packed, weights reordered beforehand).
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/depthwise_conv2d_nchwc.hpp"
#include "optune/kernels/layout.hpp"

namespace {

using namespace optune::kernels::cpu;
using optune::kernels::nchw_to_nchwc;
using optune::kernels::nchwc_size;
using optune::kernels::nchwc_to_nchw;
using Clock = std::chrono::steady_clock;

struct Layer {
  std::string name;
  Conv2dDims dims;
};

Conv2dDims dw(std::int64_t C, std::int64_t H, std::int64_t stride) {
  return {.N = 1, .C = C, .H = H, .W = H, .K = C, .R = 3, .S = 3, .stride = stride, .pad = 1};
}

const std::vector<Layer> kLayers = {
    {"dw1", dw(32, 112, 1)}, {"dw2", dw(64, 112, 2)}, {"dw3", dw(128, 56, 1)},
    {"dw4", dw(128, 56, 2)}, {"dw5", dw(256, 28, 1)}, {"dw6", dw(256, 28, 2)},
    {"dw7", dw(512, 14, 1)}, {"dw12", dw(512, 14, 2)}, {"dw13", dw(1024, 7, 1)},
};

// Operands of one layer in both layouts (NCHW8c for the kept-layout kernel and oneDNN).
struct Operands {
  Conv2dDims d;
  std::vector<float> input, filter, output, input8c, output8c;
};

struct Implementation {
  std::string name;
  std::function<void()> run;
};

constexpr int kBlock = 8;

constexpr DepthwiseConv2dConfig blocked(int cv, int owb, int ohb, int threads) {
  return {.lanes = kBlock, .oh_block = ohb, .threads = threads, .algorithm = DepthwiseAlgorithm::kBlocked,
          .c_vectors = cv, .ow_block = owb};
}

// Hand-picked register tiles (accumulators + weights within AVX2's 16 vector registers).
template <int Threads>
constexpr std::array kConfigs = {blocked(1, 4, 2, Threads), blocked(1, 8, 1, Threads), blocked(1, 6, 2, Threads),
                                 blocked(1, 12, 1, Threads), blocked(1, 7, 1, Threads), blocked(2, 4, 1, Threads),
                                 blocked(2, 3, 2, Threads), blocked(4, 2, 1, Threads)};

std::string config_name(const DepthwiseConv2dConfig& c) {
  return "cv" + std::to_string(c.c_vectors) + " owb" + std::to_string(c.ow_block) + " ohb" + std::to_string(c.oh_block);
}

// Both optune paths of one config on `o` (the packed filter is made once, outside the timing).
template <DepthwiseConv2dConfig Config>
void add_optune(Operands& o, std::vector<Implementation>& nchw, std::vector<Implementation>& nchwc) {
  auto packed = std::make_shared<std::vector<float>>(depthwise_conv2d_packed_filter_size<Config>(o.d));
  depthwise_conv2d_pack_filter<Config>(o.d, o.filter.data(), packed->data());
  nchw.push_back({config_name(Config), [&o, packed] {
                    depthwise_conv2d_packed<Config>(o.d, o.input.data(), packed->data(), o.output.data());
                  }});
  nchwc.push_back({config_name(Config), [&o, packed] {
                     depthwise_conv2d_nchwc_packed<Config>(o.d, o.input8c.data(), packed->data(), o.output8c.data());
                   }});
}

template <const auto& Configs, std::size_t... I>
void add_all(Operands& o, std::vector<Implementation>& nchw, std::vector<Implementation>& nchwc,
             std::index_sequence<I...>) {
  (add_optune<Configs[I]>(o, nchw, nchwc), ...);
}

// oneDNN's depthwise convolution on nChw8c source and destination, weights reordered once.
class OneDnnDepthwise {
 public:
  OneDnnDepthwise(Operands& o) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const Conv2dDims& d = o.d;
    const dnnl::memory::dims src_dims = {d.N, d.C, d.H, d.W}, dst_dims = {d.N, d.C, d.out_h(), d.out_w()};
    const dnnl::memory::dims weight_dims = {d.C, 1, 1, d.R, d.S};
    dnnl::memory::desc src(src_dims, dt::f32, tag::nChw8c), dst(dst_dims, dt::f32, tag::nChw8c),
        weights_any(weight_dims, dt::f32, tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                         src, weights_any, dst, {d.stride, d.stride},
                                         {d.dilation - 1, d.dilation - 1}, {d.pad, d.pad}, {d.pad, d.pad});
    dnnl::convolution_forward::primitive_desc pd(desc, engine_);
    implementation_ = pd.impl_info_str();
    primitive_ = dnnl::convolution_forward(pd);
    src_ = dnnl::memory(src, engine_, o.input8c.data());
    dst_ = dnnl::memory(dst, engine_, o.output8c.data());
    dnnl::memory user_weights({weight_dims, dt::f32, tag::goihw}, engine_, o.filter.data());
    weights_ = dnnl::memory(pd.weights_desc(), engine_);
    dnnl::reorder(user_weights, weights_).execute(stream_, user_weights, weights_);
    stream_.wait();
  }
  void run() {
    primitive_.execute(stream_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}});
    stream_.wait();
  }
  const std::string& implementation() const { return implementation_; }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::convolution_forward primitive_;
  dnnl::memory src_, weights_, dst_;
  std::string implementation_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds per call of each implementation, round-robin over them for `rounds` rounds.
std::vector<double> time_all(const std::vector<Implementation*>& impls, int rounds) {
  std::vector<int> calls(impls.size());
  for (std::size_t i = 0; i < impls.size(); ++i) {  // warm up and size a ~1 ms block
    impls[i]->run();
    const auto start = Clock::now();
    impls[i]->run();
    const double once = std::chrono::duration<double>(Clock::now() - start).count();
    calls[i] = std::clamp(static_cast<int>(1e-3 / std::max(once, 1e-7)), 1, 10000);
  }
  std::vector<std::vector<double>> seconds(impls.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < impls.size(); ++i) {
      for (int sample = 0; sample < 15; ++sample) {
        const auto start = Clock::now();
        for (int c = 0; c < calls[i]; ++c) impls[i]->run();
        seconds[i].push_back(std::chrono::duration<double>(Clock::now() - start).count() / calls[i]);
      }
    }
  }
  std::vector<double> medians;
  for (const auto& s : seconds) medians.push_back(median(s));
  return medians;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, threads = 2;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    else if (flag == "--layers") only = "," + std::string(argv[i + 1]) + ",";
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (threads != 1 && threads != 2) {
    std::fprintf(stderr, "--threads must be 1 or 2 (the configs are compiled for those)\n");
    return 2;
  }
  omp_set_num_threads(threads);
  std::printf("%-5s %-34s %9s %8s\n", "layer", "implementation", "ms", "vs oneDNN");
  for (const Layer& layer : kLayers) {
    if (!only.empty() && only.find("," + layer.name + ",") == std::string::npos) continue;
    Operands o;
    o.d = layer.dims;
    const Conv2dDims& d = o.d;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    o.input.resize(d.N * d.C * d.H * d.W);
    o.filter.resize(d.C * d.R * d.S);
    for (float& x : o.input) x = value(rng);
    for (float& x : o.filter) x = value(rng);
    o.output.resize(d.N * d.C * d.out_h() * d.out_w());
    o.input8c.resize(nchwc_size(d.N, d.C, d.H, d.W, kBlock));
    o.output8c.resize(nchwc_size(d.N, d.C, d.out_h(), d.out_w(), kBlock));
    nchw_to_nchwc(o.input.data(), d.N, d.C, d.H, d.W, kBlock, o.input8c.data());

    OneDnnDepthwise onednn(o);
    Implementation onednn_impl{"oneDNN nChw8c (" + onednn.implementation() + ")", [&onednn] { onednn.run(); }};
    std::vector<Implementation> nchw, nchwc;
    if (threads == 2) {
      add_all<kConfigs<2>>(o, nchw, nchwc, std::make_index_sequence<kConfigs<2>.size()>{});
    } else {
      add_all<kConfigs<1>>(o, nchw, nchwc, std::make_index_sequence<kConfigs<1>.size()>{});
    }
    std::vector<Implementation*> all = {&onednn_impl};
    for (auto& impl : nchw) all.push_back(&impl);
    for (auto& impl : nchwc) all.push_back(&impl);
    const std::vector<double> ms = [&] {
      std::vector<double> s = time_all(all, rounds);
      for (double& x : s) x *= 1e3;
      return s;
    }();
    const std::size_t configs = nchw.size();
    std::size_t best_nchw = 1, best_nchwc = 1 + configs;
    for (std::size_t i = 0; i < configs; ++i) {
      if (ms[1 + i] < ms[best_nchw]) best_nchw = 1 + i;
      if (ms[1 + configs + i] < ms[best_nchwc]) best_nchwc = 1 + configs + i;
    }
    const auto row = [&](const std::string& what, double value) {
      std::printf("%-5s %-34s %9.4f %7.2fx\n", layer.name.c_str(), what.c_str(), value, ms[0] / value);
    };
    row(onednn_impl.name, ms[0]);
    for (std::size_t i = 0; i < configs; ++i) row("NCHW blocked " + nchw[i].name, ms[1 + i]);
    for (std::size_t i = 0; i < configs; ++i) row("NCHW8c kept " + nchwc[i].name, ms[1 + configs + i]);
    row("best NCHW blocked: " + all[best_nchw]->name, ms[best_nchw]);
    row("best NCHW8c kept: " + all[best_nchwc]->name, ms[best_nchwc]);
    std::fflush(stdout);
  }
}
