// The CPU GEMM kernel (optune/kernels/cpu/gemm.hpp) computes the right answer for every config
// of a small compile-time space that covers every value of every GemmConfig field, on odd shapes
// whose extents no block size divides and on edges that take the narrower edge kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/gemm.hpp"

namespace optune::kernels::cpu {
namespace {

using O = LoopOrder;
using P = ParallelLoop;

constexpr GemmConfig config(int mc, int nc, int kc, int mr, int nr, int lanes, bool pack_a,
                            bool pack_b, LoopOrder order, int unroll, int threads,
                            ParallelLoop parallel) {
  return GemmConfig{mc, nc, kc, mr, nr, lanes, pack_a, pack_b, order, unroll, threads, parallel};
}

// Between them: mr 1..8,12,14; nr 1..8 vectors; lanes 4 and 8 (16 where the compile flags have
// AVX-512); each packing combination; each loop order; each parallel loop; unroll 1/2/4/8;
// threads 1 and 2; blocks that divide none of the shapes, and blocks larger than the shapes.
constexpr std::array kConfigs = {
    GemmConfig{},
    config(30, 40, 100, 5, 8, 8, true, true, O::kJcPcIc, 1, 2, P::kJc),
    config(28, 48, 77, 7, 24, 8, false, true, O::kPcJcIc, 2, 2, P::kIc),
    config(36, 64, 129, 4, 32, 8, true, false, O::kIcPcJc, 8, 2, P::kJr),
    config(9, 12, 33, 3, 12, 4, false, false, O::kJcPcIc, 4, 2, P::kJr),
    config(8, 8, 16, 1, 4, 4, true, true, O::kPcJcIc, 1, 1, P::kJc),
    config(16, 32, 250, 8, 8, 8, false, false, O::kIcPcJc, 2, 2, P::kJc),
    config(24, 20, 64, 2, 20, 4, true, false, O::kJcPcIc, 8, 2, P::kIc),
    config(48, 64, 1024, 12, 16, 8, true, true, O::kIcPcJc, 4, 2, P::kIc),
    config(14, 28, 7, 14, 28, 4, false, true, O::kPcJcIc, 2, 1, P::kJc),
    config(6, 16, 1, 6, 16, 8, true, true, O::kJcPcIc, 4, 2, P::kJr),
    config(1, 8, 3, 1, 8, 8, false, true, O::kPcJcIc, 8, 1, P::kJc),
    config(5, 12, 11, 5, 4, 4, true, false, O::kIcPcJc, 2, 2, P::kJc),
    config(510, 4096, 2048, 6, 16, 8, true, true, O::kJcPcIc, 4, 2, P::kJr),
    config(144, 2048, 384, 6, 16, 8, true, true, O::kJcPcIc, 4, 2, P::kJc),
    config(96, 192, 160, 3, 64, 8, false, false, O::kPcJcIc, 1, 2, P::kJr),
    config(64, 32, 96, 2, 32, 4, true, true, O::kIcPcJc, 8, 1, P::kJc),
#if defined(__AVX512F__)
    config(96, 512, 256, 12, 32, 16, true, true, O::kJcPcIc, 4, 2, P::kJc),
    config(30, 48, 50, 5, 48, 16, false, false, O::kIcPcJc, 2, 2, P::kJr),
#endif
};

using GemmFunction = void (*)(std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t,
                              const float*, std::int64_t, float*, std::int64_t);

template <std::size_t... I>
constexpr std::array<GemmFunction, sizeof...(I)> instantiate(std::index_sequence<I...>) {
  return {&gemm<kConfigs[I]>...};
}
constexpr auto kFunctions = instantiate(std::make_index_sequence<kConfigs.size()>());

std::string describe(const GemmConfig& c) {
  return "mc=" + std::to_string(c.mc) + " nc=" + std::to_string(c.nc) +
         " kc=" + std::to_string(c.kc) + " mr=" + std::to_string(c.mr) +
         " nr=" + std::to_string(c.nr) + " lanes=" + std::to_string(c.lanes) +
         " pack_a=" + std::to_string(c.pack_a) + " pack_b=" + std::to_string(c.pack_b) +
         " order=" + std::to_string(static_cast<int>(c.loop_order)) +
         " unroll=" + std::to_string(c.unroll) + " threads=" + std::to_string(c.threads) +
         " parallel=" + std::to_string(static_cast<int>(c.parallel));
}

// A problem with leading dimensions padded by `pad`, its operands random, C poisoned.
struct Problem {
  std::int64_t M, N, K, lda, ldb, ldc;
  std::vector<float> a, b, c;
  std::vector<double> want;  // M x N, dense

  Problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t pad)
      : M(m), N(n), K(k), lda(k + pad), ldb(n + pad), ldc(n + pad) {
    std::mt19937 rng(static_cast<unsigned>(m * 7919 + n * 31 + k));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    a.resize(static_cast<std::size_t>(M * lda));
    b.resize(static_cast<std::size_t>(K * ldb));
    for (auto& x : a) x = dist(rng);
    for (auto& x : b) x = dist(rng);
    want.assign(static_cast<std::size_t>(M * N), 0.0);
    for (std::int64_t i = 0; i < M; ++i) {
      for (std::int64_t p = 0; p < K; ++p) {
        const double aip = a[static_cast<std::size_t>(i * lda + p)];
        for (std::int64_t j = 0; j < N; ++j) {
          want[static_cast<std::size_t>(i * N + j)] +=
              aip * b[static_cast<std::size_t>(p * ldb + j)];
        }
      }
    }
  }

  // Relative L2 error of C = A * B computed by `gemm`; C's padding must stay untouched.
  double error_of(GemmFunction gemm) {
    c.assign(static_cast<std::size_t>(M * ldc), std::nanf(""));
    gemm(M, N, K, a.data(), lda, b.data(), ldb, c.data(), ldc);
    double num = 0, den = 0;
    for (std::int64_t i = 0; i < M; ++i) {
      for (std::int64_t j = 0; j < ldc; ++j) {
        const float got = c[static_cast<std::size_t>(i * ldc + j)];
        if (j >= N) {
          if (!std::isnan(got)) return INFINITY;  // wrote past N
          continue;
        }
        const double w = want[static_cast<std::size_t>(i * N + j)];
        num += (got - w) * (got - w);
        den += w * w;
      }
    }
    if (!std::isfinite(num)) return INFINITY;
    return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
  }
};

struct ShapeCase {
  std::int64_t M, N, K, pad;
};

class GemmConfigs : public ::testing::TestWithParam<std::size_t> {};

TEST_P(GemmConfigs, ComputesProductOnOddShapes) {
  const std::size_t index = GetParam();
  SCOPED_TRACE(describe(kConfigs[index]));
  static constexpr ShapeCase kShapes[] = {
      {1, 1000, 2048, 0}, {127, 509, 1021, 0}, {1, 1, 1, 0}, {17, 3, 5, 0}, {33, 65, 129, 3},
      // N in whole vectors that most nr leave a partial panel of (right-edge kernels narrower than
      // nr, threads splitting N at a vector), M leaving a few rows, K no multiple of any unroll.
      {22, 200, 77, 1}};
  for (const auto& s : kShapes) {
    // One reference per shape, shared by all configs (the reference dominates the run time).
    static std::vector<Problem> problems;
    auto found = std::find_if(problems.begin(), problems.end(), [&](const Problem& p) {
      return p.M == s.M && p.N == s.N && p.K == s.K && p.lda == s.K + s.pad;
    });
    Problem& problem =
        found != problems.end() ? *found : problems.emplace_back(s.M, s.N, s.K, s.pad);
    EXPECT_LE(problem.error_of(kFunctions[index]), 1e-4)
        << s.M << "x" << s.N << "x" << s.K << " pad " << s.pad;
  }
}

INSTANTIATE_TEST_SUITE_P(Space, GemmConfigs, ::testing::Range<std::size_t>(0, kConfigs.size()));

TEST(Gemm, ZeroDepthWritesZeros) {
  std::vector<float> c(6, std::nanf(""));
  gemm<GemmConfig{}>(2, 3, 0, nullptr, 0, nullptr, 3, c.data(), 3);
  for (float x : c) EXPECT_EQ(x, 0.0f);
}

TEST(Gemm, EmptyOutputTouchesNothing) {
  gemm<GemmConfig{}>(0, 5, 7, nullptr, 7, nullptr, 5, nullptr, 5);
  gemm<GemmConfig{}>(5, 0, 7, nullptr, 7, nullptr, 0, nullptr, 0);
}

TEST(Gemm, RepeatedCallsOfDifferentSizesReuseBuffers) {
  // The thread-local packing buffers grow between calls; results stay right.
  for (std::int64_t n : {64, 300, 17, 600}) {
    Problem problem(n, n + 1, n + 2, 0);
    EXPECT_LE(problem.error_of(&gemm<GemmConfig{.threads = 2, .parallel = ParallelLoop::kJr}>),
              1e-4)
        << n;
  }
}

TEST(GemmConfigError, RejectsMalformedConfigs) {
  EXPECT_EQ(gemm_config_error(GemmConfig{}), nullptr);
  EXPECT_NE(gemm_config_error(GemmConfig{.nr = 12, .lanes = 8}), nullptr);
  EXPECT_NE(gemm_config_error(GemmConfig{.mc = 100, .mr = 6}), nullptr);
  EXPECT_NE(gemm_config_error(GemmConfig{.nc = 1000, .nr = 16}), nullptr);
  EXPECT_NE(gemm_config_error(GemmConfig{.unroll = 3}), nullptr);
  EXPECT_NE(gemm_config_error(GemmConfig{.threads = 0}), nullptr);
}

}  // namespace
}  // namespace optune::kernels::cpu
