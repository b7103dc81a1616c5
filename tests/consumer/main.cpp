// Calls optune::gemm, defined by the header optune_apply_best() generated: the tuned shape must run
// its tuned config, the listed shape that was never tuned the row of its nearest tuned shape's
// config (16x24x8's blocks are valid for 67x45x129, so it has one), an unlisted shape the default
// config, all with the right answer. Exits non-zero otherwise.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <optune_tuned.hpp>

namespace {

// Runs one GEMM through the tuned table; returns 0 when the answer is right and the dispatch is
// the expected one.
int check(long M, long N, long K, bool expect_tuned) {
  std::vector<float> a(M * K), b(K * N), c(M * N);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-1, 1);
  for (auto& x : a) x = value(rng);
  for (auto& x : b) x = value(rng);
  bool tuned = optune::gemm(M, N, K, a.data(), K, b.data(), N, c.data(), N);
  double worst = 0;
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      double want = 0;
      for (long k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
      worst = std::max(worst, std::abs(want - c[i * N + j]));
    }
  std::printf("gemm %ldx%ldx%ld: %s config, max abs error %.3g\n", M, N, K, tuned ? "a table row's" : "default",
              worst);
  return (worst < 1e-3 && tuned == expect_tuned) ? 0 : 1;
}

}  // namespace

int main() {
  std::printf("tuned for %s on %s, %zu GEMM shapes\n", optune::tuned::kTarget, optune::tuned::kDevice,
              optune::tuned::kGemm.size());
  return check(16, 24, 8, true) + check(67, 45, 129, true) + check(5, 7, 9, false);
}
