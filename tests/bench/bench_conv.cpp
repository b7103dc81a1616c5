// bench_conv: optune's tuned CPU conv2d and depthwise conv2d candidates against oneDNN's
// convolution primitive and OpenBLAS im2col + sgemm, on the conv layers of network suites, in one
// run, with the network-level latency sum (count x latency) of each implementation.
//
//   build/tests/bench/bench_conv --suite configs/workloads/resnet18.toml
//       [--suite configs/workloads/mobilenet_v1.toml] [--rounds 2] [--dtype f32|f16|bf16|i8|u7]
//       [--candidate KEY=tuned.so]... [--default KEY=default.so]... [--layers NAME,NAME...]
// --layers keeps only the named layers of the suites (e.g. --layers conv1,pw7,dw2), for a quick look.
// --layout nchw8c: the suites keep that layout between conv layers (as `optune tune --layout`):
// optune's candidates take and give it, and it is oneDNN's user layout too (its reorders row
// then reorders from and to nChw8c; OpenBLAS, NCHW-only, is left out of those layers). A first
// layer that reads the NCHW image (key conv2d.nchw-nchw8c...) takes NCHW and gives nChw8c, on
// both sides.
// --threads N: oneDNN's and OpenBLAS's threads (default: all cores); give optune candidates of
// the same count (bench_emit_best --cores N). One thread compares kernels on a busy machine,
// where a descheduled thread stalls a whole team.
// --dtype: the precision of every layer (default: each suite's own, f32 for the shipped suites),
// as `optune tune --dtype` gives it; the keys carry it (conv2d.nchw.i8.N1...). Arithmetic:
//   f32:  float32 input, filter and output (every row below).
//   bf16: bf16 input, filter and output, float32 accumulation (oneDNN: bf16 src, weights, dst).
//   f16:  f16 input, filter and output, float32 accumulation (oneDNN: f16 where its build
//         implements it on this CPU, else its rows read "unavailable" and no ratio is given).
//   i8:   u8 x s8 with int32 accumulation and int32 output: activations in the type the default
//         template reads on this CPU (u8 on x86, for VNNI), s8 filter (oneDNN: u8 src, s8 weights,
//         s32 dst, no scales).
//   u7:   i8 with activations u8 in 0..127 (7-bit, PyTorch's reduce_range): AVX2 code multiplies
//         them with vpmaddubsw exactly (oneDNN: the same u8 src, s8 weights, s32 dst).
// Operands are random: floats uniform in [-1, 1] rounded to the type, u8 in 0..255 (u7 0..127),
// s8 in -128..127. Other dtypes than f32 add each row's relative L2 error against a float64 reference
// of the same low-precision inputs (exactly 0 for int8), GOP/s instead of GFLOP/s for int8, and
// the machine's measured float32 FMA peak (cpu_peak.hpp); OpenBLAS rows are f32 only.
// KEY is a workload key (conv2d.nchw.f32.N1.C64...); the .so files are emitted candidates
// (tests/bench/emit_best.cpp, --which best|default) compiled like the tuner compiles them.
// tests/bench/conv_vs_peers.sh tunes, emits, compiles and runs this.
//
// Rows per layer:
//   "oneDNN conv": the primitive created once with format_tag::any for source, weights and
//     destination (it picks its blocked layouts), inputs reordered into them beforehand; only
//     the primitive's execution is timed. This is the baseline of every ratio. Its output, in its
//     own layout, is checked through the next row (the same primitive).
//   "oneDNN conv + reorders": the same primitive plus the reorders from NCHW and back to NCHW,
//     i.e. the cost at optune's NCHW interface.
//   "OpenBLAS im2col+sgemm": im2col (OpenMP over rows of the column matrix) then cblas_sgemm
//     (1x1 stride-1 layers skip im2col); depthwise: im2col per channel and one sgemv per channel.
//   "optune default" / "optune tuned": candidates with optune_kernel (NCHW in and out; the input
//     layout transform is inside the timed call, the filter is packed on the first call only).
// Every implementation runs in blocks of repeats (about 20 ms each), round-robin over implementations for several
// rounds (the machine is shared); median seconds over all repeats are reported. The geometric
// mean over the layers of (oneDNN primitive time / time) closes the run: optune's goal on int8
// and bf16 is the tuned row at or above 1 on ResNet-18's 3x3 layers (--layers picks them).
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <memory>
#include <optional>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpu_peak.hpp"
#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/cpu/candidate.hpp"
#include "optune/kernels/data_type.hpp"
#include "optune/kernels/layout.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/tuner/scheduling/suite.hpp"

namespace {

using optune::kernels::Conv2dShape;
using optune::kernels::DataType;
using optune::kernels::Op;
using optune::kernels::Workload;
using Clock = std::chrono::steady_clock;

// 64-byte aligned storage, as the tuner's worker and a framework's activations have: on a kept
// layout the kernels read and write these buffers themselves, where a vector straddling cache
// lines (std::vector's 16-byte alignment) costs up to 1.9x.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    void* p = std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

// One operand: `count` elements of `dtype` as bytes on cache lines (zero to begin with).
struct Buffer {
  DataType dtype = DataType::kF32;
  std::size_t count = 0;
  std::vector<std::byte, CacheLineAllocator<std::byte>> bytes;

  Buffer(DataType type, std::size_t n) : dtype(type), count(n), bytes(n * optune::kernels::data_type_bytes(type)) {}
  void* data() { return bytes.data(); }
  float* floats() { return reinterpret_cast<float*>(bytes.data()); }  // f32 operands only
  std::vector<double> values() const {
    std::vector<double> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = optune::kernels::load_element(dtype, bytes.data(), i);
    return out;
  }
};

struct Operands {
  Workload workload;
  Buffer input, filter, output;
};

// One implementation bound to one layer: prepare once (untimed), then run (timed).
struct Implementation {
  std::string name;
  std::function<void(Operands&)> run;
};

// Random values of the type's range: floats uniform in [-1, 1] rounded to the type, integers
// over the whole type (u8 0..255, s8 -128..127, u7 0..127).
void fill_random(Buffer& b, std::mt19937& rng) {
  if (optune::kernels::is_floating(b.dtype)) {
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (std::size_t i = 0; i < b.count; ++i) optune::kernels::store_element(b.dtype, b.bytes.data(), i, value(rng));
    return;
  }
  if (b.dtype != DataType::kU8 && b.dtype != DataType::kI8 && b.dtype != DataType::kU7) {
    throw std::invalid_argument("no random operands of " + std::string(optune::kernels::data_type_name(b.dtype)));
  }
  const auto [low, high] = optune::kernels::integer_range(b.dtype);
  std::uniform_int_distribution<int> value(static_cast<int>(low), static_cast<int>(high));
  for (std::size_t i = 0; i < b.count; ++i) optune::kernels::store_element(b.dtype, b.bytes.data(), i, value(rng));
}

// NCHW -> NCHW[block]c of any element type, as raw words of its width.
Buffer to_blocked(const Buffer& nchw, const Conv2dShape& s, int block, std::size_t blocked_count) {
  Buffer out(nchw.dtype, blocked_count);
  const auto convert = [&]<typename Word>(Word*) {
    optune::kernels::nchw_to_nchwc(reinterpret_cast<const Word*>(nchw.bytes.data()), s.N, s.C, s.H, s.W, block,
                                   reinterpret_cast<Word*>(out.data()));
  };
  switch (optune::kernels::data_type_bytes(nchw.dtype)) {
    case 1: convert(static_cast<std::uint8_t*>(nullptr)); break;
    case 2: convert(static_cast<std::uint16_t*>(nullptr)); break;
    case 4: convert(static_cast<std::uint32_t*>(nullptr)); break;
    default: throw std::invalid_argument("no blocked layout of " + std::string(optune::kernels::data_type_name(nchw.dtype)));
  }
  return out;
}

// The layer's operands in the types the candidates take: the workload's dtype as the default cpu
// template reads it on this CPU (operator_operands: an i8 layer's u8 activations on x86).
Operands make_operands(const Workload& w, const optune::kernels::DeviceInfo& device) {
  const auto& kernel = optune::backends::default_template(w, "cpu", device);
  const auto described = optune::kernels::operator_operands(w, kernel.input_dtypes(w, device));
  const Conv2dShape& s = w.conv();
  // NCHW, then the workload's layout (zero in the padding channels, as a previous layer leaves them)
  Operands o{w, Buffer(described[0].dtype, static_cast<std::size_t>(s.N * s.C * s.H * s.W)),
             Buffer(described[1].dtype, described[1].count), Buffer(described[2].dtype, described[2].count)};
  std::mt19937 rng(42);
  fill_random(o.input, rng);
  fill_random(o.filter, rng);
  if (optune::kernels::is_blocked_layout(w.input_layout_block())) o.input = to_blocked(o.input, s, w.layout_block, described[0].count);
  return o;
}

// The output in double from the very inputs the implementations read.
std::vector<double> reference_output(const Operands& o) {
  const std::vector<double> input = o.input.values(), filter = o.filter.values();
  std::vector<double> want(o.output.count);
  optune::kernels::reference(o.workload, {input.data(), filter.data()}, want.data());
  return want;
}

// ---- oneDNN ----------------------------------------------------------------------------------

dnnl::memory::data_type onednn_type(DataType type) {
  using dt = dnnl::memory::data_type;
  switch (type) {
    case DataType::kF32: return dt::f32;
    case DataType::kF16: return dt::f16;
    case DataType::kBF16: return dt::bf16;
    case DataType::kI8: return dt::s8;
    case DataType::kU8:
    case DataType::kU7: return dt::u8;  // u7: u8 holding 0..127
    case DataType::kI32: return dt::s32;
    default: throw std::invalid_argument("oneDNN has no " + std::string(optune::kernels::data_type_name(type)));
  }
}

// In the operands' own types; throws dnnl::error where oneDNN has no implementation for them.
class OneDnnConv {
 public:
  OneDnnConv(const Workload& w, const dnnl::engine& engine, Operands& o) : engine_(engine), stream_(engine) {
    using tag = dnnl::memory::format_tag;
    const Conv2dShape& s = w.conv();
    const bool depthwise = w.op == Op::kDepthwiseConv2d;
    const dnnl::memory::dim K = depthwise ? s.C : s.K, P = s.out_h(), Q = s.out_w();
    const dnnl::memory::dims src_dims = {s.N, s.C, s.H, s.W}, dst_dims = {s.N, K, P, Q};
    const dnnl::memory::dims weight_dims =
        depthwise ? dnnl::memory::dims{s.C, 1, 1, s.R, s.S} : dnnl::memory::dims{K, s.C, s.R, s.S};
    const tag weight_tag = depthwise ? tag::goihw : tag::oihw;
    const auto user_tag = [](int block) {
      return block == 0 ? tag::nchw : block == 4 ? tag::nChw4c : block == 8 ? tag::nChw8c : tag::nChw16c;
    };
    const auto src_type = onednn_type(o.input.dtype), weights_type = onednn_type(o.filter.dtype),
               dst_type = onednn_type(o.output.dtype);
    dnnl::memory::desc src_any(src_dims, src_type, tag::any), weights_any(weight_dims, weights_type, tag::any),
        dst_any(dst_dims, dst_type, tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                         src_any, weights_any, dst_any, {s.stride, s.stride},
                                         {s.dilation - 1, s.dilation - 1}, {s.pad, s.pad}, {s.pad, s.pad});
    dnnl::convolution_forward::primitive_desc pd(desc, engine_);
    implementation_ = pd.impl_info_str();
    primitive_ = dnnl::convolution_forward(pd);
    user_src_ = dnnl::memory({src_dims, src_type, user_tag(w.input_layout_block())}, engine_, o.input.data());
    user_dst_ = dnnl::memory({dst_dims, dst_type, user_tag(w.layout_block)}, engine_, o.output.data());
    dnnl::memory user_weights({weight_dims, weights_type, weight_tag}, engine_, o.filter.data());
    src_ = dnnl::memory(pd.src_desc(), engine_);
    weights_ = dnnl::memory(pd.weights_desc(), engine_);
    dst_ = dnnl::memory(pd.dst_desc(), engine_);
    dnnl::reorder(user_weights, weights_).execute(stream_, user_weights, weights_);
    src_reorder_ = dnnl::reorder(user_src_, src_);
    dst_reorder_ = dnnl::reorder(dst_, user_dst_);
    src_reorder_.execute(stream_, user_src_, src_);
    stream_.wait();
  }
  const std::string& implementation() const { return implementation_; }
  void run_primitive() {
    primitive_.execute(stream_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}});
    stream_.wait();
  }
  void run_with_reorders() {
    src_reorder_.execute(stream_, user_src_, src_);
    primitive_.execute(stream_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weights_}, {DNNL_ARG_DST, dst_}});
    dst_reorder_.execute(stream_, dst_, user_dst_);
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::convolution_forward primitive_;
  dnnl::reorder src_reorder_, dst_reorder_;
  dnnl::memory user_src_, user_dst_, src_, weights_, dst_;
  std::string implementation_;
};

// ---- OpenBLAS im2col + sgemm (f32 operands) --------------------------------------------------

// Column matrix [C * R * S][P * Q] of one image, zero where a tap falls in the padding.
void im2col(const Conv2dShape& s, const float* image, std::int64_t channels, float* columns) {
  const std::int64_t P = s.out_h(), Q = s.out_w();
#pragma omp parallel for
  for (std::int64_t row = 0; row < channels * s.R * s.S; ++row) {
    const std::int64_t c = row / (s.R * s.S), r = row / s.S % s.R, t = row % s.S;
    float* out = columns + row * P * Q;
    for (std::int64_t p = 0; p < P; ++p) {
      const std::int64_t h = p * s.stride - s.pad + r * s.dilation;
      for (std::int64_t q = 0; q < Q; ++q) {
        const std::int64_t w = q * s.stride - s.pad + t * s.dilation;
        out[p * Q + q] = h >= 0 && h < s.H && w >= 0 && w < s.W ? image[(c * s.H + h) * s.W + w] : 0.0f;
      }
    }
  }
}

void run_openblas(Operands& o, std::vector<float>& columns) {
  const Conv2dShape& s = o.workload.conv();
  const std::int64_t P = s.out_h(), Q = s.out_w(), taps = s.R * s.S;
  const bool depthwise = o.workload.op == Op::kDepthwiseConv2d;
  const bool direct = !depthwise && s.R == 1 && s.S == 1 && s.stride == 1 && s.pad == 0;
  const float* filter = o.filter.floats();
  for (std::int64_t n = 0; n < s.N; ++n) {
    const float* image = o.input.floats() + n * s.C * s.H * s.W;
    float* out = o.output.floats() + n * (depthwise ? s.C : s.K) * P * Q;
    if (direct) {  // a 1x1 stride-1 conv is a GEMM on the image itself
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.K, P * Q, s.C, 1.0f, filter, s.C, image,
                  P * Q, 0.0f, out, P * Q);
      continue;
    }
    im2col(s, image, s.C, columns.data());
    if (!depthwise) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.K, P * Q, s.C * taps, 1.0f, filter,
                  s.C * taps, columns.data(), P * Q, 0.0f, out, P * Q);
      continue;
    }
    for (std::int64_t c = 0; c < s.C; ++c) {
      cblas_sgemv(CblasRowMajor, CblasTrans, taps, P * Q, 1.0f, columns.data() + c * taps * P * Q, P * Q,
                  filter + c * taps, 1, 0.0f, out + c * P * Q, 1);
    }
  }
}

// ---- optune candidates -----------------------------------------------------------------------

using CandidateFunction = optune::kernels::CandidateFunction;

CandidateFunction load_candidate(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // open for the program's life
  if (!handle) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto function = reinterpret_cast<CandidateFunction>(dlsym(handle, optune::kernels::kCandidateSymbol));
  if (!function) throw std::runtime_error("no optune_kernel in " + path);
  return function;
}

// ---- timing ----------------------------------------------------------------------------------

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? NAN : values[values.size() / 2];
}

struct Options {
  std::vector<std::string> suites;
  std::map<std::string, std::string> tuned, defaults;  // workload key -> .so
  std::vector<std::string> layers;                       // empty: every layer
  int rounds = 2;
  int threads = 0;  // 0: all cores
  std::string layout;  // empty: each suite's own
  std::optional<DataType> dtype;  // empty: each suite's own
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) parts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

constexpr const char* kUsage =
    "usage: bench_conv --suite FILE [--suite FILE]... [--rounds N] [--candidate KEY=tuned.so]...\n"
    "                  [--default KEY=default.so]... [--layers NAME,NAME...]\n"
    "                  [--threads N] [--layout nchw8c] [--dtype f32|f16|bf16|i8|u7]\n";

DataType parse_dtype(const std::string& name) {
  const DataType dtype = optune::kernels::parse_data_type(name);
  if (dtype != DataType::kF32 && dtype != DataType::kF16 && dtype != DataType::kBF16 && dtype != DataType::kI8 &&
      dtype != DataType::kU7) {
    throw std::invalid_argument("--dtype: f32, f16, bf16, i8 or u7, not " + name);
  }
  return dtype;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
    const std::string value = argv[++i];
    auto key_and_path = [&](std::map<std::string, std::string>& into) {
      const auto eq = value.find('=');
      if (eq == std::string::npos) throw std::invalid_argument(arg + " wants KEY=path");
      into[value.substr(0, eq)] = value.substr(eq + 1);
    };
    if (arg == "--suite") {
      options.suites.push_back(value);
    } else if (arg == "--candidate") {
      key_and_path(options.tuned);
    } else if (arg == "--default") {
      key_and_path(options.defaults);
    } else if (arg == "--threads") {
      options.threads = std::max(1, std::atoi(value.c_str()));
    } else if (arg == "--layers") {
      options.layers = split_commas(value);
    } else if (arg == "--layout") {
      options.layout = value;
    } else if (arg == "--dtype") {
      options.dtype = parse_dtype(value);
    } else if (arg == "--rounds") {
      options.rounds = std::max(1, std::atoi(value.c_str()));
    } else {
      throw std::invalid_argument("unknown argument " + arg + " (see the comment atop bench_conv.cpp)");
    }
  }
  if (options.suites.empty()) throw std::invalid_argument("give at least one --suite");
  return options;
}

struct Measurement {
  double seconds = NAN;  // median per call
  double error = NAN;    // relative L2 against the reference; NaN: not checked
};

// Median seconds per call of every implementation on one layer, and its output's error against
// `want` (none: the output stays in the implementation's own layout, as the oneDNN primitive's).
std::vector<Measurement> bench_layer(Operands& o, const std::vector<Implementation>& impls, int rounds,
                                     const std::vector<double>* want) {
  constexpr int kRepeats = 5;
  constexpr double kRepeatSeconds = 0.02;
  std::vector<std::vector<double>> seconds(impls.size());
  std::vector<Measurement> measured(impls.size());
  // f32: 1e-4; f16, bf16: the output's rounding and float32 accumulation; integers: exact
  const double tolerance = optune::kernels::check_tolerance(o.workload, o.output.dtype, 1e-4);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < impls.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // let spinning threads sleep
      std::fill(o.output.bytes.begin(), o.output.bytes.end(), std::byte{0xff});  // NaN in floats, -1 in int32
      impls[i].run(o);  // warm-up (and a tuned candidate's one-time filter packing)
      if (want && round == 0) {
        const std::vector<double> got = o.output.values();
        const double error = optune::kernels::relative_l2_error(got.data(), want->data(), got.size());
        measured[i].error = error;
        if (!(error <= tolerance)) {
          std::printf("  WARNING: %s: relative L2 error %.3g against the reference\n", impls[i].name.c_str(), error);
        }
      }
      // Calls a repeat: about kRepeatSeconds, sized by a call timed after the warm-up. (Sized by
      // the layer's work, a fast int8 layer's repeat was two calls, 1 ms after the 30 ms pause.)
      const auto once = Clock::now();
      impls[i].run(o);
      const double call = std::chrono::duration<double>(Clock::now() - once).count();
      const int number = std::clamp(static_cast<int>(kRepeatSeconds / std::max(call, 1e-7)), 1, 100000);
      for (int r = 0; r < kRepeats; ++r) {
        const auto start = Clock::now();
        for (int k = 0; k < number; ++k) impls[i].run(o);
        seconds[i].push_back(std::chrono::duration<double>(Clock::now() - start).count() / number);
      }
    }
  }
  for (std::size_t i = 0; i < impls.size(); ++i) measured[i].seconds = median(seconds[i]);
  return measured;
}

struct Layer {
  std::string suite, name;
  Workload workload;
  int count = 1;
};

std::string type_name(DataType type) {
  return type == DataType::kI32 ? "s32" : type == DataType::kI8 ? "s8" : std::string(optune::kernels::data_type_name(type));
}

// "u8 x s8 -> s32", as oneDNN names the types.
std::string arithmetic(const Operands& o) {
  return type_name(o.input.dtype) + " x " + type_name(o.filter.dtype) + " -> " + type_name(o.output.dtype);
}

void print_fma_peak(int cores) {
  std::vector<double> peaks;
  for (int i = 0; i < 3; ++i) peaks.push_back(optune::bench::fma_peak_gflops(cores));
  std::sort(peaks.begin(), peaks.end());
  std::printf("float32 FMA peak: %.1f GFLOP/s on %d cores (median of 3)\n", peaks[1], cores);
}

}  // namespace

int main(int argc, char** argv) try {
  const Options options = parse_options(argc, argv);
  const int cores = options.threads > 0 ? options.threads
                                        : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  openblas_set_num_threads(cores);
  omp_set_num_threads(cores);
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const optune::kernels::DeviceInfo device = optune::measure::detect_local_cpu();

  std::vector<Layer> layers;
  for (const auto& path : options.suites) {
    std::optional<int> layout;
    if (!options.layout.empty()) layout = optune::kernels::parse_layout(options.layout);
    const auto suite = optune::tuner::load_suite(path, layout);
    for (const auto& entry : suite.entries) {
      if (entry.workload.op == Op::kGemm) continue;
      const auto& only = options.layers;
      if (!only.empty() && std::find(only.begin(), only.end(), entry.name) == only.end()) continue;
      layers.push_back({suite.name, entry.name, entry.workload, entry.count});
      if (options.dtype) layers.back().workload.dtype = *options.dtype;
    }
  }
  const bool all_f32 = std::all_of(layers.begin(), layers.end(),
                                   [](const Layer& l) { return l.workload.dtype == DataType::kF32; });
  // Row names in a fixed order; a missing candidate leaves its cell empty.
  const std::vector<std::string> rows = {"oneDNN conv", "oneDNN conv + reorders", "OpenBLAS im2col+sgemm",
                                         "optune default", "optune tuned"};
  std::map<std::string, std::map<std::string, double>> network_seconds;  // suite -> row -> sum
  std::map<std::string, std::map<std::string, int>> network_layers;       // suite -> row -> layers summed
  std::map<std::string, int> suite_layers;
  std::map<std::string, std::vector<double>> log_ratios;                   // row -> log(oneDNN time / time)
  if (!all_f32) print_fma_peak(cores);
  std::printf("%d cores; median %s (padded taps count as work), ratio = oneDNN primitive time / time%s\n", cores,
              all_f32 ? "GFLOP/s" : "GFLOP/s or GOP/s",
              all_f32 ? "" : ", err = relative L2 against a float64 reference of the same inputs");
  for (const Layer& layer : layers) {
    const Workload& w = layer.workload;
    Operands o = make_operands(w, device);
    const Conv2dShape& s = w.conv();
    const bool is_f32 = o.output.dtype == DataType::kF32, is_integer = !optune::kernels::is_floating(o.output.dtype);

    std::optional<OneDnnConv> onednn;
    std::string onednn_name;
    try {
      onednn.emplace(w, engine, o);
      onednn_name = onednn->implementation();
    } catch (const dnnl::error& e) {  // e.g. f16 where this oneDNN has no implementation
      onednn_name = std::string("unavailable: ") + e.what();
    }
    std::vector<Implementation> impls;  // their outputs NCHW (or the layer's layout), checked
    if (onednn) impls.push_back({rows[1], [&](Operands&) { onednn->run_with_reorders(); }});
    if (w.layout_block == 0 && is_f32) {
      auto columns = std::make_shared<std::vector<float>>(
          static_cast<std::size_t>(s.C * s.R * s.S * s.out_h() * s.out_w()));
      impls.push_back({rows[2], [columns](Operands& x) { run_openblas(x, *columns); }});
    }
    for (const auto& [row, candidates] : {std::pair{rows[3], &options.defaults}, std::pair{rows[4], &options.tuned}}) {
      const auto found = candidates->find(w.key());
      if (found == candidates->end()) continue;
      const CandidateFunction f = load_candidate(found->second);
      impls.push_back({row, [f](Operands& x) {
                         const void* inputs[] = {x.input.data(), x.filter.data()};
                         f(inputs, x.output.data());
                       }});
    }
    const std::vector<double> want = reference_output(o);
    std::vector<Measurement> measured = bench_layer(o, impls, options.rounds, &want);
    if (onednn) {
      const Implementation primitive{rows[0], [&](Operands&) { onednn->run_primitive(); }};
      Measurement m = bench_layer(o, {primitive}, options.rounds, nullptr)[0];
      m.error = measured[0].error;  // the same primitive's output, checked through the reorders
      impls.insert(impls.begin(), primitive);
      measured.insert(measured.begin(), m);
    }

    ++suite_layers[layer.suite];
    std::printf("\n%s %s  %s x%d  (%.3f G%s; %soneDNN: %s)\n", layer.suite.c_str(), layer.name.c_str(),
                w.key().c_str(), layer.count, w.flops() / 1e9, is_integer ? "OP" : "FLOP",
                is_f32 ? "" : (arithmetic(o) + "; ").c_str(), onednn_name.c_str());
    if (!onednn) std::printf("  %-26s unavailable\n", rows[0].c_str());
    for (std::size_t i = 0; i < impls.size(); ++i) {
      const double seconds = measured[i].seconds;
      std::printf("  %-26s %9.1f %-7s %8.3f ms", impls[i].name.c_str(), w.flops() / seconds / 1e9,
                  is_integer ? "GOP/s" : "GFLOP/s", seconds * 1e3);
      if (onednn) {
        const double ratio = measured[0].seconds / seconds;
        std::printf("  %5.2fx", ratio);
        log_ratios[impls[i].name].push_back(std::log(ratio));
      }
      if (!is_f32) std::printf("  err %.3g", measured[i].error);
      std::printf("\n");
      network_seconds[layer.suite][impls[i].name] += layer.count * seconds;
      ++network_layers[layer.suite][impls[i].name];
    }
  }
  std::printf("\nGeometric mean over layers of (oneDNN primitive time / time):\n");
  for (const auto& row : rows) {
    const auto& logs = log_ratios[row];
    if (logs.empty()) continue;
    double sum = 0;
    for (double l : logs) sum += l;
    std::printf("  %-26s %5.2fx  (%zu layers)\n", row.c_str(), std::exp(sum / logs.size()), logs.size());
  }
  std::printf("\nNetwork latency of the conv layers (sum of count x median latency; rows that ran every layer):\n");
  for (const auto& [suite, sums] : network_seconds) {
    for (const auto& row : rows) {
      const auto found = sums.find(row);
      if (found == sums.end() || network_layers[suite][row] != suite_layers[suite]) continue;
      std::printf("  %-14s %-26s %9.3f ms\n", suite.c_str(), row.c_str(), found->second * 1e3);
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_conv: %s\n", e.what());
  return 2;
}
