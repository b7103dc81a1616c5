// The dot-product GEMM kernels (gemm_int8.hpp, gemm_bf16.hpp) against references over configs
// that cover every micro-tile width the compiled path takes, A packed and read in place, odd
// blocks, one and two threads, on shapes whose extents no block divides, K of whole and partial
// groups, leading dimensions past the extents (C's padding must stay untouched) and K = 0.
// int8 is exact against an int64 product; bf16 is within 2u(bf16) + K u(f32) (relative L2)
// of a double product of the same bf16 inputs. Compiled with -march=native: the path under test
// is this machine's (VNNI and AVX-512 BF16 where it has them, AVX2 or plain C++ elsewhere).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "optune/kernels/cpu/gemm_bf16.hpp"
#include "optune/kernels/cpu/gemm_int8.hpp"

namespace optune::kernels::cpu {
namespace {

struct Shape {
  std::int64_t M, N, K;
  bool padded;  // leading dimensions past the extents
};
constexpr Shape kShapes[] = {{1, 1, 1, false},     {7, 33, 5, false},   {49, 512, 67, false}, {65, 17, 130, false},
                             {196, 256, 2304, false}, {3, 100, 4, true}, {31, 47, 259, true},  {5, 9, 0, false},
                             {100, 1, 9, true},    {29, 70, 64, false}, {45, 33, 132, true},  {15, 95, 1028, true}};

struct Layout {
  std::int64_t lda, ldb, ldc;
};
Layout layout_of(const Shape& s) { return s.padded ? Layout{s.K + 3, s.N + 5, s.N + 7} : Layout{s.K, s.N, s.N}; }

// Between them: mr 1, 5, 6, 7, 14; nr 16, 32, 48, 64 (valid on every path: 16-lane vectors with
// VNNI and BF16, 8 elsewhere); kc of whole and partial groups; A packed and in place; the threads
// splitting N, or M (the last two).
template <typename Config>
constexpr std::array<Config, 12> dot_configs() {
  auto config = [](int mc, int nc, int kc, int mr, int nr, int threads, bool pack_a, bool split_rows = false) {
    return Config{.mc = mc, .nc = nc, .kc = kc, .mr = mr, .nr = nr, .threads = threads, .pack_a = pack_a,
                  .split_rows = split_rows};
  };
  return {config(96, 512, 512, 6, 32, 2, true), config(96, 512, 512, 6, 32, 2, false),
          config(28, 48, 7, 14, 16, 2, true),   config(28, 48, 8, 14, 16, 2, false),
          config(15, 48, 64, 5, 48, 1, false),  config(12, 64, 130, 6, 64, 2, true),
          config(12, 64, 132, 6, 64, 2, false), config(8, 16, 2, 1, 16, 2, false),
          config(21, 80, 13, 7, 16, 2, true),   config(98, 256, 256, 14, 32, 1, false),
          config(96, 512, 512, 6, 32, 2, false, true), config(21, 48, 7, 7, 16, 2, true, true)};
}
constexpr auto kInt8Configs = dot_configs<GemmInt8Config>();
constexpr auto kBf16Configs = dot_configs<GemmBf16Config>();

// Calls check.operator()<Config>() for each config of Configs (kernels take configs as template
// arguments).
template <const auto& Configs, typename Check, std::size_t... I>
void for_each_config(Check&& check, std::index_sequence<I...>) {
  (check.template operator()<Configs[I]>(), ...);
}

// Every config on every shape, exact against an int64 product, C's padding untouched.
template <typename TA, typename TB, const auto& Configs = kInt8Configs>
void expect_int8_exact(unsigned seed) {
  std::mt19937 random(seed);
  auto draw = [&random]<typename T>(std::vector<T>& values) {
    std::uniform_int_distribution<int> range(std::is_signed_v<T> ? -128 : 0, std::is_signed_v<T> ? 127 : 255);
    for (auto& x : values) x = static_cast<T>(range(random));
  };
  for (const Shape& s : kShapes) {
    const Layout l = layout_of(s);
    std::vector<TA> a(std::max<std::int64_t>(1, s.M * l.lda));
    std::vector<TB> b(std::max<std::int64_t>(1, s.K * l.ldb));
    draw(a);
    draw(b);
    std::vector<std::int64_t> expected(s.M * s.N, 0);
    for (std::int64_t i = 0; i < s.M; ++i)
      for (std::int64_t p = 0; p < s.K; ++p)
        for (std::int64_t j = 0; j < s.N; ++j) expected[i * s.N + j] += std::int64_t{a[i * l.lda + p]} * b[p * l.ldb + j];
    auto check = [&]<GemmInt8Config Cfg>() {
      constexpr std::int32_t kUntouched = 0x5a5a5a5a;
      std::vector<std::int32_t> c(std::max<std::int64_t>(1, s.M * l.ldc), kUntouched);
      gemm_int8<Cfg>(s.M, s.N, s.K, a.data(), l.lda, b.data(), l.ldb, c.data(), l.ldc);
      std::int64_t wrong = 0;
      for (std::int64_t i = 0; i < s.M; ++i)
        for (std::int64_t j = 0; j < l.ldc; ++j)
          wrong += c[i * l.ldc + j] != (j < s.N ? expected[i * s.N + j] : kUntouched);
      EXPECT_EQ(wrong, 0) << s.M << "x" << s.N << "x" << s.K << " mr " << Cfg.mr << " nr " << Cfg.nr << " kc "
                          << Cfg.kc << " pack_a " << Cfg.pack_a;
    };
    for_each_config<Configs>(check, std::make_index_sequence<Configs.size()>());
  }
}

// AMX tiles (gemm_int8.hpp's amx configs) as the bf16 ones below, KC in steps of 64.
constexpr std::array<GemmInt8Config, 5> kInt8AmxConfigs = {
    GemmInt8Config{.mc = 96, .nc = 512, .kc = 512, .mr = 32, .nr = 32, .threads = 2, .pack_a = false, .amx = true},
    GemmInt8Config{.mc = 96, .nc = 512, .kc = 128, .mr = 32, .nr = 32, .threads = 2, .pack_a = true, .amx = true},
    GemmInt8Config{.mc = 32, .nc = 96, .kc = 64, .mr = 16, .nr = 48, .threads = 1, .pack_a = false, .amx = true},
    GemmInt8Config{.mc = 64, .nc = 64, .kc = 192, .mr = 32, .nr = 16, .threads = 2, .pack_a = false,
                   .split_rows = true, .amx = true},
    GemmInt8Config{.mc = 16, .nc = 32, .kc = 1024, .mr = 16, .nr = 32, .threads = 2, .pack_a = true, .amx = true}};

// Every signedness on AMX tiles (tdpbusd, tdpbsud, tdpbssd, tdpbuud); the vector paths where the
// target has none.
TEST(CpuDotGemm, Int8OnAmxTilesIsExactForEveryConfigShapeAndSignedness) {
#if defined(OPTUNE_GEMM_INT8_AMX)
  EXPECT_TRUE(amx::permitted()) << "Linux refused the process AMX's tile state";
#endif
  expect_int8_exact<std::uint8_t, std::int8_t, kInt8AmxConfigs>(21);
  expect_int8_exact<std::int8_t, std::uint8_t, kInt8AmxConfigs>(22);
  expect_int8_exact<std::int8_t, std::int8_t, kInt8AmxConfigs>(23);
  expect_int8_exact<std::uint8_t, std::uint8_t, kInt8AmxConfigs>(24);
}

// u8 activations by s8 weights: the GEMM's operands as x86 runs them (vpdpbusd's order).
TEST(CpuDotGemm, Int8IsExactForEveryConfigAndShape) { expect_int8_exact<std::uint8_t, std::int8_t>(11); }

// s8 A by u8 B (a conv2d's filter by its image columns: conv2d_dot.hpp): the u8 operand goes in
// vpdpbusd's unsigned slot though it is B; and s8 by s8, the pair path on every machine.
TEST(CpuDotGemm, Int8IsExactWithTheUnsignedOperandOnEitherSide) {
  expect_int8_exact<std::int8_t, std::uint8_t>(13);
  expect_int8_exact<std::int8_t, std::int8_t>(14);
}

// The configs' bf16 GEMM on every shape within its bound of a double product, writing nothing past N.
template <const auto& Configs>
void expect_bf16_within_bound() {
  std::mt19937 random(12);
  std::uniform_real_distribution<float> values(-1.0f, 1.0f);
  for (const Shape& s : kShapes) {
    const Layout l = layout_of(s);
    std::vector<bfloat16> a(std::max<std::int64_t>(1, s.M * l.lda)), b(std::max<std::int64_t>(1, s.K * l.ldb));
    for (auto& x : a) x = narrow<bfloat16>(values(random));
    for (auto& x : b) x = narrow<bfloat16>(values(random));
    std::vector<double> expected(s.M * s.N, 0);
    for (std::int64_t i = 0; i < s.M; ++i)
      for (std::int64_t p = 0; p < s.K; ++p)
        for (std::int64_t j = 0; j < s.N; ++j)
          expected[i * s.N + j] += double{widen(a[i * l.lda + p])} * widen(b[p * l.ldb + j]);
    const double bound = 2 * std::ldexp(1.0, -8) + static_cast<double>(s.K) * std::ldexp(1.0, -24);
    auto check = [&]<GemmBf16Config Cfg>() {
      constexpr std::uint16_t kUntouched = 0x7e11;
      std::vector<bfloat16> c(std::max<std::int64_t>(1, s.M * l.ldc), bfloat16{kUntouched});
      gemm_bf16<Cfg>(s.M, s.N, s.K, a.data(), l.lda, b.data(), l.ldb, c.data(), l.ldc);
      double error = 0, norm = 0;
      std::int64_t padding_written = 0;
      for (std::int64_t i = 0; i < s.M; ++i)
        for (std::int64_t j = 0; j < l.ldc; ++j) {
          if (j >= s.N) {
            padding_written += c[i * l.ldc + j].bits != kUntouched;
            continue;
          }
          const double got = widen(c[i * l.ldc + j]), want = expected[i * s.N + j];
          error += (got - want) * (got - want);
          norm += want * want;
        }
      const std::string what = std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + " mr " +
                               std::to_string(Cfg.mr) + " nr " + std::to_string(Cfg.nr) + " kc " +
                               std::to_string(Cfg.kc) + " pack_a " + std::to_string(Cfg.pack_a);
      EXPECT_EQ(padding_written, 0) << what;
      if (s.K == 0)
        EXPECT_EQ(error, 0) << what;
      else
        EXPECT_LE(std::sqrt(error / norm), bound) << what;
    };
    for_each_config<Configs>(check, std::make_index_sequence<Configs.size()>());
  }
}

TEST(CpuDotGemm, Bf16IsWithinItsBoundForEveryConfigAndShape) { expect_bf16_within_bound<kBf16Configs>(); }

// AMX tiles (gemm_bf16.hpp's amx configs): 16 and 32 rows, 16 to 48 columns, A in place and
// copied, K in steps of 32 and short of them (zero padded), rows and columns short of a tile, the
// threads splitting N or M. Where the target has no AMX they run the vector path.
constexpr std::array<GemmBf16Config, 6> kBf16AmxConfigs = {
    GemmBf16Config{.mc = 96, .nc = 512, .kc = 512, .mr = 32, .nr = 32, .threads = 2, .pack_a = false, .amx = true},
    GemmBf16Config{.mc = 96, .nc = 512, .kc = 256, .mr = 32, .nr = 32, .threads = 2, .pack_a = true, .amx = true},
    GemmBf16Config{.mc = 32, .nc = 96, .kc = 64, .mr = 16, .nr = 48, .threads = 1, .pack_a = false, .amx = true},
    GemmBf16Config{.mc = 48, .nc = 32, .kc = 32, .mr = 16, .nr = 16, .threads = 2, .pack_a = true, .amx = true},
    GemmBf16Config{.mc = 64, .nc = 64, .kc = 96, .mr = 32, .nr = 16, .threads = 2, .pack_a = false,
                   .split_rows = true, .amx = true},
    GemmBf16Config{.mc = 16, .nc = 32, .kc = 1024, .mr = 16, .nr = 32, .threads = 2, .pack_a = true, .amx = true}};

TEST(CpuDotGemm, Bf16OnAmxTilesIsWithinItsBoundForEveryConfigAndShape) {
#if defined(OPTUNE_GEMM_BF16_AMX)
  EXPECT_TRUE(amx::permitted()) << "Linux refused the process AMX's tile state";
#endif
  expect_bf16_within_bound<kBf16AmxConfigs>();
}

}  // namespace
}  // namespace optune::kernels::cpu
