// Instantiates the installed CPU GEMM kernel header with the default config and checks the
// result; exits non-zero on a wrong answer.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <optune/kernels/cpu/gemm.hpp>
#include <optune/kernels/workload.hpp>

int main() {
  const auto workload = optune::kernels::parse_workload(optune::kernels::Op::kGemm, "67,45,129");
  const auto& s = workload.gemm();
  std::vector<float> a(s.M * s.K), b(s.K * s.N), c(s.M * s.N);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-1, 1);
  for (auto& x : a) x = value(rng);
  for (auto& x : b) x = value(rng);
  optune::kernels::cpu::gemm<optune::kernels::cpu::GemmConfig{}>(s.M, s.N, s.K, a.data(), s.K, b.data(),
                                                                s.N, c.data(), s.N);
  double worst = 0;
  for (long i = 0; i < s.M; ++i)
    for (long j = 0; j < s.N; ++j) {
      double want = 0;
      for (long k = 0; k < s.K; ++k) want += double(a[i * s.K + k]) * b[k * s.N + j];
      worst = std::max(worst, std::abs(want - c[i * s.N + j]));
    }
  std::printf("%s max abs error %.3g\n", workload.key().c_str(), worst);
  return worst < 1e-3 ? 0 : 1;
}
