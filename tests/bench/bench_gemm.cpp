// bench_gemm: optune's CPU GEMM kernel against oneDNN's matmul and OpenBLAS's sgemm, on this
// machine, in one run, next to the machine's measured FMA peak.
//
//   cmake -S . -B build-gemm -DCMAKE_BUILD_TYPE=Release -DOPTUNE_BUILD_BENCH=ON
//   cmake --build build-gemm --target bench_gemm -j2
//   build-gemm/tests/bench/bench_gemm [--shapes 2048,2048,2048;512,512,512] [--rounds 3]
//       [--candidate M,N,K=path/to/candidate.so]...   (repeatable; a tuned candidate's .so)
//       [--default M,N,K=path/to/candidate.so]...     (the template's default config for the shape,
//                                                      from bench_emit_best --which default)
//
// Rows: "oneDNN" (matmul primitive created once, only execution timed), "OpenBLAS"
// (cblas_sgemm, one thread per core), "optune generic config" (one fixed config for all shapes,
// compiled in here), "optune hand-picked <name>" (configs chosen by hand while writing the
// kernel, not tuned), "optune default" (--default) and "optune candidate" (shared objects
// exporting optune_kernel). Operands are 64-byte aligned, as a framework's tensors are. Each
// implementation runs in blocks of repeats, round-robin over implementations for several rounds
// (the machine is shared, so load changes between blocks); a pause between blocks lets the other
// libraries' spinning worker threads go idle. Reported: median GFLOP/s over all repeats, its
// ratio to oneDNN's median, and the best repeat (on a shared machine, the least disturbed one).
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cpu_peak.hpp"
#include "optune/kernels/cpu/gemm.hpp"

namespace {

using optune::bench::fma_peak_gflops;
using optune::kernels::cpu::GemmConfig;
using optune::kernels::cpu::LoopOrder;
using optune::kernels::cpu::ParallelLoop;
using Clock = std::chrono::steady_clock;

struct Shape {
  std::int64_t M, N, K;
  std::string str() const {
    return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  }
};

// ---- implementations -------------------------------------------------------------------------

// Operands start on a cache line, as a framework's tensors do (PyTorch and oneDNN allocate 64-byte
// aligned) and as the tuner's worker measures them: from malloc's 16-byte alignment every vector
// load of a kernel that reads A or B in place would straddle two lines.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::size_t kAlignment = 64;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
    if (void* p = std::aligned_alloc(kAlignment, std::max(bytes, kAlignment))) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
};
using Floats = std::vector<float, CacheLineAllocator<float>>;

struct Operands {
  Shape shape;
  Floats a, b, c;
};

struct Implementation {
  std::string name;
  std::function<void(Operands&)> run;  // C = A * B
  std::function<bool(const Shape&)> applies = [](const Shape&) { return true; };
};

template <GemmConfig Cfg>
void run_optune(Operands& o) {
  const auto [M, N, K] = o.shape;
  optune::kernels::cpu::gemm<Cfg>(M, N, K, o.a.data(), K, o.b.data(), N, o.c.data(), N);
}

// One fixed config for every shape, the template's default before it followed the shape (6 x
// 2-vector micro-tile, MC 96, NC 1024, KC 256, both packed, BLIS order, unroll 4, all cores on
// jc), for `threads` cores. The shape's own default comes in as a candidate (--default).
template <int Threads>
constexpr GemmConfig kGeneric{.mc = 96,
                              .nc = 1024,
                              .kc = 256,
                              .mr = 6,
                              .nr = 2 * optune::kernels::cpu::kMaxLanes,
                              .lanes = optune::kernels::cpu::kMaxLanes,
                              .pack_a = true,
                              .pack_b = true,
                              .loop_order = LoopOrder::kJcPcIc,
                              .unroll = 4,
                              .threads = Threads,
                              .parallel = ParallelLoop::kJc};

std::function<void(Operands&)> generic_for(int cores) {
  if (cores >= 16) return run_optune<kGeneric<16>>;
  if (cores >= 8) return run_optune<kGeneric<8>>;
  if (cores >= 4) return run_optune<kGeneric<4>>;
  if (cores >= 2) return run_optune<kGeneric<2>>;
  return run_optune<kGeneric<1>>;
}

#if defined(__AVX__) && !defined(__AVX512F__)
// Hand-picked while writing the kernel, for AVX2 with 2 cores (not tuned: a few sweeps by hand).
constexpr GemmConfig kHandKc512{.mc = 72,
                                .nc = 2048,
                                .kc = 512,
                                .mr = 6,
                                .nr = 16,
                                .lanes = 8,
                                .threads = 2,
                                .parallel = ParallelLoop::kJc};
constexpr GemmConfig kHandKc768{.mc = 48,
                                .nc = 2048,
                                .kc = 768,
                                .mr = 6,
                                .nr = 16,
                                .lanes = 8,
                                .threads = 2,
                                .parallel = ParallelLoop::kJc};
// A read in place (no packing): for shapes with few columns, packing A costs as much as using it.
constexpr GemmConfig kHandInPlaceA{.mc = 96,
                                   .nc = 1024,
                                   .kc = 1024,
                                   .mr = 6,
                                   .nr = 16,
                                   .lanes = 8,
                                   .pack_a = false,
                                   .threads = 2,
                                   .parallel = ParallelLoop::kIc};
constexpr GemmConfig kHandInPlaceAJc{.mc = 72,
                                     .nc = 2048,
                                     .kc = 1024,
                                     .mr = 6,
                                     .nr = 16,
                                     .lanes = 8,
                                     .pack_a = false,
                                     .threads = 2,
                                     .parallel = ParallelLoop::kJc};
// Few rows: share the packed B between the cores, split the micro-panels (jr).
constexpr GemmConfig kHandSharedB{.mc = 50,
                                  .nc = 512,
                                  .kc = 256,
                                  .mr = 5,
                                  .nr = 16,
                                  .lanes = 8,
                                  .threads = 2,
                                  .parallel = ParallelLoop::kJr};
#endif

std::vector<Implementation> optune_hand_picked() {
  std::vector<Implementation> list;
#if defined(__AVX__) && !defined(__AVX512F__)
  list.push_back({"optune hand-picked kc512", run_optune<kHandKc512>});
  list.push_back({"optune hand-picked kc768", run_optune<kHandKc768>});
  list.push_back({"optune hand-picked A in place ic", run_optune<kHandInPlaceA>});
  list.push_back({"optune hand-picked A in place jc", run_optune<kHandInPlaceAJc>});
  list.push_back({"optune hand-picked shared B jr", run_optune<kHandSharedB>});
#endif
  return list;
}

// The widest ISA oneDNN's kernels use here (ONEDNN_MAX_CPU_ISA lowers it).
const char* onednn_isa_name() {
  using isa = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case isa::avx2: return "avx2";
    case isa::avx2_vnni: return "avx2_vnni";
    case isa::avx512_core: return "avx512_core";
    case isa::avx512_core_vnni: return "avx512_core_vnni";
    case isa::avx512_core_bf16: return "avx512_core_bf16";
    case isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

// oneDNN's matmul: the primitive is created once per shape, outside the timed region.
class OneDnnMatmul {
 public:
  OneDnnMatmul() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

  void run(Operands& o) {
    if (!(o.shape.M == shape_.M && o.shape.N == shape_.N && o.shape.K == shape_.K))
      prepare(o.shape);
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const auto [M, N, K] = o.shape;
    dnnl::memory a({{M, K}, dt::f32, tag::ab}, engine_, o.a.data());
    dnnl::memory b({{K, N}, dt::f32, tag::ab}, engine_, o.b.data());
    dnnl::memory c({{M, N}, dt::f32, tag::ab}, engine_, o.c.data());
    primitive_->execute(stream_, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    stream_.wait();
  }

 private:
  void prepare(const Shape& s) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::memory::desc a({s.M, s.K}, dt::f32, tag::ab), b({s.K, s.N}, dt::f32, tag::ab),
        c({s.M, s.N}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), engine_);
    primitive_ = std::make_unique<dnnl::matmul>(pd);
    shape_ = s;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::unique_ptr<dnnl::matmul> primitive_;
  Shape shape_{0, 0, 0};
};

void run_openblas(Operands& o) {
  const auto [M, N, K] = o.shape;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), 1.0f, o.a.data(), static_cast<int>(K), o.b.data(),
              static_cast<int>(N), 0.0f, o.c.data(), static_cast<int>(N));
}

// A tuned candidate: a shared object exporting optune_kernel, compiled for one shape.
struct Candidate {
  Shape shape;
  std::string path;
  void* handle = nullptr;
  void (*function)(const float* const*, float*) = nullptr;
};

Candidate load_candidate(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos) throw std::invalid_argument("--candidate wants M,N,K=path");
  Candidate c;
  if (std::sscanf(spec.substr(0, eq).c_str(), "%ld,%ld,%ld", &c.shape.M, &c.shape.N, &c.shape.K) !=
      3) {
    throw std::invalid_argument("--candidate wants M,N,K=path, got " + spec);
  }
  c.path = spec.substr(eq + 1);
  c.handle = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (c.handle == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  c.function =
      reinterpret_cast<void (*)(const float* const*, float*)>(dlsym(c.handle, "optune_kernel"));
  if (c.function == nullptr) throw std::runtime_error(c.path + " lacks optune_kernel");
  return c;
}

// ---- timing ----------------------------------------------------------------------------------

double relative_l2(const Floats& got, const Floats& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    num += d * d;
    den += static_cast<double>(want[i]) * want[i];
  }
  return std::isfinite(num) ? std::sqrt(num / den) : INFINITY;
}

struct Timing {
  std::vector<double> seconds;  // per call
  double median() const {
    std::vector<double> s = seconds;
    std::sort(s.begin(), s.end());
    return s.empty() ? NAN : s[s.size() / 2];
  }
  double best() const {
    return seconds.empty() ? NAN : *std::min_element(seconds.begin(), seconds.end());
  }
};

// One block: a warm-up call, then `repeats` timed repeats of `number` calls each.
void time_block(const Implementation& impl, Operands& o, int number, int repeats, Timing& out) {
  impl.run(o);
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < number; ++i) impl.run(o);
    out.seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count() / number);
  }
}

struct Options {
  std::vector<Shape> shapes = {{256, 256, 256},    {512, 512, 512},  {1024, 1024, 1024},
                               {2048, 2048, 2048}, {196, 256, 2304}, {3136, 64, 576},
                               {49, 512, 4608}};
  int rounds = 3;
  std::vector<std::pair<std::string, bool>> candidates;  // spec, whether it is the template's default
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--candidate" || arg == "--default") {
      options.candidates.push_back({value(), arg == "--default"});
    } else if (arg == "--rounds") {
      options.rounds = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--shapes") {
      options.shapes.clear();
      std::stringstream list(value());
      std::string item;
      while (std::getline(list, item, ';')) {
        Shape s{};
        if (std::sscanf(item.c_str(), "%ld,%ld,%ld", &s.M, &s.N, &s.K) != 3) {
          throw std::invalid_argument("bad shape " + item);
        }
        options.shapes.push_back(s);
      }
    } else {
      throw std::invalid_argument("unknown argument " + arg +
                                  " (see the comment atop bench_gemm.cpp)");
    }
  }
  return options;
}

void bench_shape(const Shape& shape, const std::vector<Implementation>& impls, int rounds,
                 double peak) {
  Operands o{shape, {}, {}, {}};
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  o.a.resize(static_cast<std::size_t>(shape.M * shape.K));
  o.b.resize(static_cast<std::size_t>(shape.K * shape.N));
  o.c.assign(static_cast<std::size_t>(shape.M * shape.N), 0.0f);
  for (auto& x : o.a) x = dist(rng);
  for (auto& x : o.b) x = dist(rng);

  const double flops = 2.0 * static_cast<double>(shape.M) * shape.N * shape.K;
  // About 0.1 s per repeat block item; at least one call.
  const int number = std::max(1, static_cast<int>(2e9 / flops));
  const int repeats = 5;

  std::vector<const Implementation*> active;
  for (const auto& impl : impls) {
    if (impl.applies(shape)) active.push_back(&impl);
  }
  Floats want;
  std::vector<Timing> timings(active.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < active.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::fill(o.c.begin(), o.c.end(), NAN);
      time_block(*active[i], o, number, repeats, timings[i]);
      if (round > 0) continue;
      if (i == 0) want = o.c;  // oneDNN is first: the reference of the others
      if (const double err = relative_l2(o.c, want); !(err <= 1e-4)) {
        std::printf("  WARNING: %s differs from oneDNN, relative L2 %.3g\n",
                    active[i]->name.c_str(), err);
      }
    }
  }
  const double onednn = flops / timings[0].median() / 1e9;
  std::printf("\n%s (%.2f GFLOP; %d rounds x %d repeats x %d calls)\n", shape.str().c_str(),
              flops / 1e9, rounds, repeats, number);
  std::printf("  %-34s %10s %8s %10s %12s\n", "implementation", "GFLOP/s", "% peak", "vs oneDNN",
              "best GFLOP/s");
  for (std::size_t i = 0; i < active.size(); ++i) {
    const double gflops = flops / timings[i].median() / 1e9;
    std::printf("  %-34s %10.1f %7.1f%% %9.2fx %12.1f\n", active[i]->name.c_str(), gflops,
                100.0 * gflops / peak, gflops / onednn, flops / timings[i].best() / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) try {
  const Options options = parse_options(argc, argv);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  openblas_set_num_threads(cores);
  omp_set_num_threads(cores);

  std::vector<double> peaks;
  for (int i = 0; i < 3; ++i) peaks.push_back(fma_peak_gflops(cores));
  std::sort(peaks.begin(), peaks.end());
  const double peak = peaks[1];
  std::printf("FMA peak: %.1f GFLOP/s on %d cores (%d-lane FMA, median of 3; single core %.1f)\n",
              peak, cores, optune::kernels::cpu::kMaxLanes, fma_peak_gflops(1));
  std::printf("oneDNN's ISA: %s; OpenBLAS core: %s\n", onednn_isa_name(), openblas_get_corename());

  OneDnnMatmul onednn;
  std::vector<Implementation> impls;
  impls.push_back({"oneDNN matmul", [&](Operands& o) { onednn.run(o); }});
  impls.push_back({"OpenBLAS sgemm", run_openblas});
  impls.push_back({"optune generic config", generic_for(cores)});
  for (auto& impl : optune_hand_picked()) impls.push_back(impl);
  std::vector<Shape> shapes = options.shapes;
  for (const auto& [spec, is_default] : options.candidates) {
    const Candidate c = load_candidate(spec);  // the handle stays open for the program's life
    impls.push_back(
        {is_default ? "optune default" : "optune candidate " + c.path.substr(c.path.find_last_of('/') + 1),
         [f = c.function](Operands& o) {
           const float* inputs[] = {o.a.data(), o.b.data()};
           f(inputs, o.c.data());
         },
         [s = c.shape](const Shape& x) { return x.M == s.M && x.N == s.N && x.K == s.K; }});
    const bool listed = std::any_of(shapes.begin(), shapes.end(), [&](const Shape& x) {
      return x.M == c.shape.M && x.N == c.shape.N && x.K == c.shape.K;
    });
    if (!listed) shapes.push_back(c.shape);
  }
  for (const auto& shape : shapes) bench_shape(shape, impls, options.rounds, peak);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_gemm: %s\n", e.what());
  return 2;
}
