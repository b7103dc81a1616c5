// bench_gemm_lowp: optune's low-precision CPU GEMMs against oneDNN's matmul in the same
// precision, on this machine, in one run, next to the machine's measured float32 FMA peak.
//
//   build/tests/bench/bench_gemm_lowp --dtype bf16|f16|i8|u7 [--shapes 1024,1024,1024;196,256,2304]
//       [--rounds 3] [--candidate M,N,K=tuned.so]... [--default M,N,K=default.so]...
// (tests/bench/gemm_lowp_vs_onednn.sh tunes, emits and compiles the candidates, then runs this.)
//
// Arithmetic of each row: bf16 and f16, inputs and output in the type with float32 accumulation
// (oneDNN: its matmul on bf16/f16 memory, whichever implementation it picks on this ISA, named in
// the output); i8, u8 activations times s8 weights with int32 accumulation and output (oneDNN's
// u8s8s32 matmul); u7, the same with activations in 0..127 (7-bit). Errors: relative L2 of each output against a float64 product of the same
// low-precision inputs (0 for an exact int8 result). Timing: blocks of repeats of at least 20 ms
// each, round-robin over the implementations for several rounds; the median per call is reported.
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cpu_peak.hpp"
#include "optune/kernels/cpu/element_types.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace cpu = optune::kernels::cpu;

struct Shape {
  std::int64_t M, N, K;
  std::string str() const { return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K); }
  bool operator==(const Shape&) const = default;
};

enum class Precision { kBf16, kF16, kI8 };

// Bytes of one element of A, B and C.
struct Widths {
  std::size_t a, b, c;
};
// The largest activation (A) of an i8 run: 255, or 127 for --dtype u7 (7-bit activations, on
// which oneDNN's AVX2 u8s8s32 code is exact: its vpmaddubsw cannot saturate).
int activation_max = 255;

Widths widths(Precision p) { return p == Precision::kI8 ? Widths{1, 1, 4} : Widths{2, 2, 2}; }

// Operands as raw bytes on cache lines, and their values as doubles (the reference's inputs).
struct Operands {
  Shape shape;
  std::vector<std::byte> a, b, c;
  std::vector<double> reference;  // C in double from the same inputs
};

std::vector<std::byte> aligned_bytes(std::size_t n) { return std::vector<std::byte>(n + 64); }
void* aligned(std::vector<std::byte>& bytes) {
  auto address = reinterpret_cast<std::uintptr_t>(bytes.data());
  return bytes.data() + ((64 - address % 64) % 64);
}

double element(Precision p, const void* data, std::size_t i, bool is_a, bool is_c) {
  if (p == Precision::kI8) {
    if (is_c) return static_cast<const std::int32_t*>(data)[i];
    return is_a ? static_cast<const std::uint8_t*>(data)[i] : static_cast<const std::int8_t*>(data)[i];
  }
  const auto bits = static_cast<const std::uint16_t*>(data)[i];
  return p == Precision::kBf16 ? cpu::widen(cpu::bfloat16{bits}) : cpu::widen(cpu::float16{bits});
}

Operands make_operands(Precision p, const Shape& s) {
  Operands o{s, {}, {}, {}, {}};
  const Widths w = widths(p);
  o.a = aligned_bytes(s.M * s.K * w.a);
  o.b = aligned_bytes(s.K * s.N * w.b);
  o.c = aligned_bytes(s.M * s.N * w.c);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> u8(0, activation_max), s8(-128, 127);
  std::vector<double> a(s.M * s.K), b(s.K * s.N);
  auto fill = [&](void* data, std::vector<double>& values, bool is_a) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (p == Precision::kI8) {
        if (is_a) static_cast<std::uint8_t*>(data)[i] = static_cast<std::uint8_t>(u8(rng));
        else static_cast<std::int8_t*>(data)[i] = static_cast<std::int8_t>(s8(rng));
      } else {
        const float x = real(rng);
        static_cast<std::uint16_t*>(data)[i] =
            p == Precision::kBf16 ? cpu::narrow<cpu::bfloat16>(x).bits : cpu::narrow<cpu::float16>(x).bits;
      }
      values[i] = element(p, data, i, is_a, false);
    }
  };
  fill(aligned(o.a), a, true);
  fill(aligned(o.b), b, false);
  o.reference.assign(s.M * s.N, 0.0);
#pragma omp parallel for
  for (std::int64_t i = 0; i < s.M; ++i)
    for (std::int64_t k = 0; k < s.K; ++k)
      for (std::int64_t j = 0; j < s.N; ++j) o.reference[i * s.N + j] += a[i * s.K + k] * b[k * s.N + j];
  return o;
}

double relative_l2(Precision p, Operands& o) {
  double num = 0, den = 0;
  const void* c = aligned(o.c);
  for (std::size_t i = 0; i < o.reference.size(); ++i) {
    const double d = element(p, c, i, false, true) - o.reference[i];
    num += d * d;
    den += o.reference[i] * o.reference[i];
  }
  return std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
}

struct Implementation {
  std::string name;
  std::function<void(Operands&)> run;
  std::function<bool(const Shape&)> applies = [](const Shape&) { return true; };
};

// oneDNN's matmul in the precision, created once per shape outside the timed region.
class OneDnnMatmul {
 public:
  explicit OneDnnMatmul(Precision p) : precision_(p), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}
  void run(Operands& o) {
    if (!(shape_ == o.shape)) create(o.shape);
    dnnl::memory a(a_desc_, engine_, aligned(o.a)), b(b_desc_, engine_, aligned(o.b)), c(c_desc_, engine_, aligned(o.c));
    primitive_->execute(stream_, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    stream_.wait();
  }
  std::string implementation() const { return implementation_; }
  // Whether oneDNN has a matmul of the precision here: 2.6 has no bf16 or f16 one under an AVX2
  // cap (ONEDNN_MAX_CPU_ISA=AVX2), and the benchmark then times optune alone.
  bool available(const Shape& s) {
    try {
      if (!(shape_ == s)) create(s);
      return true;
    } catch (const dnnl::error& error) {
      implementation_ = std::string("nothing: ") + error.what();
      return false;
    }
  }

 private:
  void create(const Shape& s) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dt a_type = precision_ == Precision::kI8 ? dt::u8 : precision_ == Precision::kBf16 ? dt::bf16 : dt::f16;
    const dt b_type = precision_ == Precision::kI8 ? dt::s8 : a_type;
    const dt c_type = precision_ == Precision::kI8 ? dt::s32 : a_type;
    a_desc_ = dnnl::memory::desc({s.M, s.K}, a_type, tag::ab);
    b_desc_ = dnnl::memory::desc({s.K, s.N}, b_type, tag::ab);
    c_desc_ = dnnl::memory::desc({s.M, s.N}, c_type, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_desc_, b_desc_, c_desc_), engine_);
    implementation_ = pd.impl_info_str();
    primitive_ = std::make_unique<dnnl::matmul>(pd);
    shape_ = s;
  }
  Precision precision_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::memory::desc a_desc_, b_desc_, c_desc_;
  std::unique_ptr<dnnl::matmul> primitive_;
  Shape shape_{0, 0, 0};
  std::string implementation_;
};

struct Candidate {
  Shape shape{};
  std::string path;
  void (*function)(const void* const*, void*) = nullptr;
};

Candidate load_candidate(const std::string& spec) {
  const auto eq = spec.find('=');
  Candidate c;
  if (eq == std::string::npos ||
      std::sscanf(spec.substr(0, eq).c_str(), "%ld,%ld,%ld", &c.shape.M, &c.shape.N, &c.shape.K) != 3)
    throw std::invalid_argument("--candidate wants M,N,K=path, got " + spec);
  c.path = spec.substr(eq + 1);
  void* handle = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);  // open for the program's life
  if (handle == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  c.function = reinterpret_cast<void (*)(const void* const*, void*)>(dlsym(handle, "optune_kernel"));
  if (c.function == nullptr) throw std::runtime_error(c.path + " lacks optune_kernel");
  return c;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? NAN : values[values.size() / 2];
}

constexpr double kRepeatSeconds = 0.02;

void bench_shape(Precision p, const Shape& shape, const std::vector<Implementation>& impls, int rounds, double peak) {
  Operands o = make_operands(p, shape);
  const double ops = 2.0 * double(shape.M) * double(shape.N) * double(shape.K);
  const int repeats = 5;
  std::vector<const Implementation*> active;
  for (const auto& impl : impls)
    if (impl.applies(shape)) active.push_back(&impl);
  std::vector<std::vector<double>> seconds(active.size());
  std::vector<double> errors(active.size());
  std::vector<int> calls(active.size(), 1);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < active.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the previous one's spinning threads sleep
      std::memset(aligned(o.c), 0xA5, shape.M * shape.N * widths(p).c);
      active[i]->run(o);  // warm-up, and the output checked
      if (round == 0) errors[i] = relative_l2(p, o);
      // Each repeat runs calls enough for kRepeatSeconds, back to back, as the tuner's worker times
      // them: a repeat of one 0.7 ms call right after the sleep timed the cores' and AMX's wake-up
      // as much as the kernel, and moved an implementation by 30% between runs.
      if (round == 0) {
        const auto start = Clock::now();
        active[i]->run(o);
        const double once = std::chrono::duration<double>(Clock::now() - start).count();
        calls[i] = std::max(1, static_cast<int>(std::ceil(kRepeatSeconds / std::max(once, 1e-7))));
      }
      const int number = calls[i];
      for (int r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        for (int n = 0; n < number; ++n) active[i]->run(o);
        seconds[i].push_back(std::chrono::duration<double>(Clock::now() - start).count() / number);
      }
    }
  // The first implementation is oneDNN's where it has one (Implementation::applies).
  const bool has_onednn = !active.empty() && active[0]->name == "oneDNN matmul";
  const double onednn = has_onednn ? ops / median(seconds[0]) / 1e9 : NAN;
  std::printf("\n%s (%.2f G%s; %d rounds x %d repeats of %.0f ms)\n", shape.str().c_str(), ops / 1e9,
              p == Precision::kI8 ? "OP" : "FLOP", rounds, repeats, kRepeatSeconds * 1e3);
  std::printf("  %-34s %10s %10s %10s %12s\n", "implementation", p == Precision::kI8 ? "GOP/s" : "GFLOP/s",
              "x f32 peak", "vs oneDNN", "rel. L2 err");
  for (std::size_t i = 0; i < active.size(); ++i) {
    const double rate = ops / median(seconds[i]) / 1e9;
    const std::string versus = has_onednn ? std::to_string(rate / onednn).substr(0, 4) + "x" : "-";
    std::printf("  %-34s %10.1f %10.2f %10s %12.3g\n", active[i]->name.c_str(), rate, rate / peak, versus.c_str(),
                errors[i]);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  Precision precision = Precision::kBf16;
  std::vector<Shape> shapes = {{1024, 1024, 1024}, {196, 256, 2304}, {3136, 64, 576}, {49, 512, 4608}};
  int rounds = 3;
  std::vector<std::pair<std::string, bool>> specs;  // candidate, whether it is the default config
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--dtype") {
      const std::string d = value();
      if (d == "bf16") precision = Precision::kBf16;
      else if (d == "f16") precision = Precision::kF16;
      else if (d == "i8") precision = Precision::kI8;
      else if (d == "u7") precision = Precision::kI8, activation_max = 127;
      else throw std::invalid_argument("--dtype: bf16, f16, i8 or u7, not " + d);
    } else if (arg == "--rounds") {
      rounds = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--shapes") {
      shapes.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ';');) {
        Shape s{};
        if (std::sscanf(item.c_str(), "%ld,%ld,%ld", &s.M, &s.N, &s.K) != 3) throw std::invalid_argument("bad shape " + item);
        shapes.push_back(s);
      }
    } else if (arg == "--candidate" || arg == "--default") {
      specs.push_back({value(), arg == "--default"});
    } else {
      throw std::invalid_argument("unknown argument " + arg + " (see the comment atop bench_gemm_lowp.cpp)");
    }
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  omp_set_num_threads(cores);
  std::vector<double> peaks;
  for (int i = 0; i < 3; ++i) peaks.push_back(optune::bench::fma_peak_gflops(cores));
  std::sort(peaks.begin(), peaks.end());
  std::printf("float32 FMA peak: %.1f GFLOP/s on %d cores (median of 3)\n", peaks[1], cores);

  OneDnnMatmul onednn(precision);
  std::vector<Implementation> impls;
  impls.push_back({"oneDNN matmul", [&](Operands& o) { onednn.run(o); },
                   [&](const Shape& s) { return onednn.available(s); }});
  for (const auto& [spec, is_default] : specs) {
    const Candidate c = load_candidate(spec);
    impls.push_back({is_default ? "optune default" : "optune tuned",
                     [f = c.function](Operands& o) {
                       const void* inputs[] = {aligned(o.a), aligned(o.b)};
                       f(inputs, aligned(o.c));
                     },
                     [s = c.shape](const Shape& x) { return x == s; }});
    if (std::find(shapes.begin(), shapes.end(), c.shape) == shapes.end()) shapes.push_back(c.shape);
  }
  for (const auto& shape : shapes) {
    bench_shape(precision, shape, impls, rounds, peaks[1]);
    std::printf("  (oneDNN ran %s)\n", onednn.implementation().c_str());
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_gemm_lowp: %s\n", e.what());
  return 2;
}
