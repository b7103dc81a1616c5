// Low-precision operators end to end: `--dtype` (or a shape's dtype= item) tunes, checks and
// records bf16, f16 and i8 CPU GEMMs and convolutions under their own keys; a dtype no template
// runs is bad input naming those that are.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "../support/command_test.hpp"

namespace {

using optune::test_support::CommandRun;

class DtypeCliTest : public optune::test_support::CommandTest {
 protected:
  // Whether this CPU takes the kept layout nchw16c (16-lane vectors, AVX-512): elsewhere it is refused.
  bool takes_nchw16c() {
    return optune("space --op conv2d --shape N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=nchw16c --target cpu").code == 0;
  }

  // Tunes each of `shapes` of `op` in u7 (`trials` random trials), capped to AVX2 and not; returns
  // every record (empty where a run failed).
  nlohmann::json tune_u7(const std::string& op, std::initializer_list<const char*> shapes, int trials) {
    for (const char* environment : {"OPTUNE_MAX_CPU_ISA=avx2", ""})
      for (const char* shape : shapes) {
        CommandRun run = optune("tune --op " + op + " --shape " + shape + " --dtype u7 --target cpu --tuner random "
                                "--trials " + std::to_string(trials) + " --batch-size " + std::to_string(trials) +
                                " --repeat 1 --min-repeat-ms 1 --remeasure 0 --quiet --seed 3 --db " + db(),
                                environment);
        EXPECT_EQ(run.code, 0) << environment << " " << run.out << run.err;
        if (run.code != 0) return nlohmann::json::array();
      }
    CommandRun history = optune("query --history --format json --db " + db());
    EXPECT_EQ(history.code, 0) << history.err;
    return history.code == 0 ? nlohmann::json::parse(history.out) : nlohmann::json::array();
  }

  std::filesystem::path dir() { return std::filesystem::path(db()).parent_path(); }

  // apply-best's header for `device` (empty: this one), written into the test's directory.
  std::string apply_best(const std::string& device) {
    CommandRun apply = optune("apply-best --target cpu " + (device.empty() ? "" : "--device '" + device + "' ") +
                              "--db " + db() + " --out " + (dir() / "optune_tuned.hpp").string());
    EXPECT_EQ(apply.code, 0) << apply.err;
    return optune::test_support::slurp(dir() / "optune_tuned.hpp");
  }

  // `source`, a consumer of that header, compiled with `flags` and run: its exit status (-1: it
  // did not compile) and its output (or the compiler's).
  std::pair<int, std::string> run_consumer(const std::string& source, const std::string& flags) {
    std::ofstream(dir() / "consumer.cpp") << source;
    const std::string compile = "c++ -std=c++20 -O1 -fopenmp " + flags + " -I " + dir().string() + " -I " +
                                OPTUNE_SOURCE_DIR + "/backends/cpu/include " + (dir() / "consumer.cpp").string() +
                                " -o " + (dir() / "consumer").string() + " 2> " + (dir() / "compile.log").string();
    if (std::system(compile.c_str()) != 0) return {-1, optune::test_support::slurp(dir() / "compile.log")};
    const int status = std::system(((dir() / "consumer").string() + " > " + (dir() / "consumer.out").string()).c_str());
    return {status, optune::test_support::slurp(dir() / "consumer.out")};
  }
};

TEST_F(DtypeCliTest, Bfloat16AndHalfGemmsTuneCheckAndRecordUnderTheirKeys) {
  for (const char* dtype : {"bf16", "f16"}) {
    const std::string shape = "37,45,300";  // odd edges; K long enough for accumulation error
    // gemm.cpu widens to float32 as it packs: every CPU's path (AVX-512 BF16 has its own below).
    CommandRun run = optune("tune --op gemm --template gemm.cpu --shape " + shape + " --dtype " + dtype +
                            " --target cpu --tuner random --trials 3 --batch-size 3 --repeat 1 --min-repeat-ms 1 "
                            "--remeasure 0 --quiet --seed 3 --db " + db());
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    const std::string key = std::string("gemm.") + dtype + ".M37.N45.K300";
    EXPECT_NE(run.out.find(key), std::string::npos) << run.out;
    CommandRun history = optune("query --history --format json --op gemm --shape " + shape + " --dtype " + dtype +
                                " --db " + db());
    ASSERT_EQ(history.code, 0) << history.err;
    const auto records = nlohmann::json::parse(history.out);
    ASSERT_EQ(records.size(), 4u) << history.out;  // the default and 3 trials
    for (const auto& record : records) {
      EXPECT_EQ(record["workload"], key);
      EXPECT_EQ(record["error_kind"], "ok") << record.dump();
      EXPECT_GT(record["gflops"].get<double>(), 0);
      EXPECT_TRUE(record["config"]["pack_b"].get<bool>()) << record.dump();  // widened as B is packed
    }
  }
  // The float32 records of the same shape are another workload.
  CommandRun f32 = optune("query --history --format json --op gemm --shape 37,45,300 --db " + db());
  ASSERT_EQ(f32.code, 0);
  EXPECT_TRUE(nlohmann::json::parse(f32.out).empty()) << f32.out;
}

// Where the CPU has AVX-512 BF16, bf16 GEMMs default to gemm_bf16.cpu (vdpbf16ps) and its
// candidates pass the check on odd shapes; elsewhere that template is refused, naming gemm.cpu.
TEST_F(DtypeCliTest, Bfloat16GemmRunsOnTheDotProductKernelWhereTheCpuHasIt) {
  CommandRun space = optune("space --op gemm --shape 37,45,300 --dtype bf16 --target cpu --format json");
  ASSERT_EQ(space.code, 0) << space.err;
  if (nlohmann::json::parse(space.out)["template"] != "gemm_bf16.cpu") {
    expect_bad_input("tune --op gemm --template gemm_bf16.cpu --shape 37,45,300 --dtype bf16 --target cpu --db " + db(),
                     "gemm.cpu");
    return;
  }
  for (const std::string shape : {"37,45,300", "1,17,3", "70,33,129"}) {
    CommandRun run = optune("tune --op gemm --shape " + shape + " --dtype bf16 --target cpu --tuner random --trials 4 "
                            "--batch-size 4 --repeat 1 --min-repeat-ms 1 --remeasure 0 --quiet --seed 5 --db " + db());
    ASSERT_EQ(run.code, 0) << run.out << run.err;
  }
  CommandRun history = optune("query --history --format json --db " + db());
  ASSERT_EQ(history.code, 0) << history.err;
  const auto records = nlohmann::json::parse(history.out);
  ASSERT_EQ(records.size(), 15u) << history.out;  // 3 shapes: the default and 4 trials each
  for (const auto& record : records) {
    EXPECT_EQ(record["template"], "gemm_bf16.cpu");
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
    EXPECT_EQ(record["config"]["nr"].get<int>() % 16, 0) << "whole zmm vectors of float32";
  }
}

TEST_F(DtypeCliTest, ADtypeNoTemplateRunsIsBadInputNamingThoseThatAre) {
  expect_bad_input("tune --op conv2d --shape N=1,C=8,H=8,W=8,K=8,R=3,S=3 --dtype i32 --target cpu --db " + db(),
                   "runs f16, bf16, f32, i8");
  expect_bad_input("tune --op gemm --shape 64,64,64 --dtype u16 --target cpu --db " + db(), "bf16");
  expect_bad_input("tune --op gemm --shape 64,64,64 --dtype q4 --target cpu --db " + db(), "not a dtype");
  expect_bad_input("tune --op gemm --shape M=64,N=64,K=64,dtype=f16 --dtype bf16 --target cpu --db " + db(),
                   "dtype given twice");
  expect_bad_input("space --op gemm --shape 64,64,64 --dtype i64 --target cpu", "runs");
  // 7-bit activations run on the GEMMs and convolutions, not on depthwise convolutions.
  expect_bad_input("tune --op depthwise_conv2d --shape N=1,C=16,H=8,W=8,R=3,S=3 --dtype u7 --target cpu --db " + db(),
                   "runs f16, bf16, f32, i8");
}

}  // namespace

namespace {

// K 77 packs A on every path; K 132 lets the VNNI path read it in place (pack_a off, the default
// there), M 29 leaving a panel of edge rows that is packed all the same.
TEST_F(DtypeCliTest, Int8GemmIsExactAndItsRecordsSayTheActivationsSignedness) {
  for (const char* shape : {"29,40,77", "29,40,132"}) {
    CommandRun run = optune("tune --op gemm --shape " + std::string(shape) + " --dtype i8 --target cpu --tuner random "
                            "--trials 4 --batch-size 4 --repeat 1 --min-repeat-ms 1 --remeasure 0 --quiet --seed 2 --db " +
                            db());
    ASSERT_EQ(run.code, 0) << run.out << run.err;
  }
  CommandRun history = optune("query --history --format json --db " + db());
  ASSERT_EQ(history.code, 0) << history.err;
  const auto records = nlohmann::json::parse(history.out);
  ASSERT_EQ(records.size(), 10u) << history.out;
  for (const auto& record : records) {
    EXPECT_TRUE(record["workload"] == "gemm.i8.M29.N40.K77" || record["workload"] == "gemm.i8.M29.N40.K132");
    EXPECT_EQ(record["template"], "gemm_int8.cpu");
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
    const std::string activations = record["config"]["activations"];
    EXPECT_TRUE(activations == "u8" || activations == "s8") << record.dump();
  }
}

}  // namespace

namespace {

// u7 (activations in 0..127, PyTorch's reduce_range): AVX2 code (the ISA capped) multiplies them by
// vpmaddubsw's quads, the uncapped CPU by its own path (VNNI or AMX where present); every candidate
// is exact against the worker's int32 reference, on K that packs A (77) and K that lets it be read
// in place (132), and the records keep the u7 key and say "u7".
TEST_F(DtypeCliTest, SevenBitActivationsGemmIsExactOnAvx2QuadsAndElsewhere) {
  const auto records = tune_u7("gemm", {"29,40,77", "29,40,132"}, 4);
  ASSERT_GE(records.size(), 16u) << records.dump();
  for (const auto& record : records) {
    EXPECT_TRUE(record["workload"] == "gemm.u7.M29.N40.K77" || record["workload"] == "gemm.u7.M29.N40.K132");
    EXPECT_EQ(record["template"], "gemm_int8.cpu");
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
    EXPECT_EQ(record["config"]["activations"], "u7") << record.dump();
  }
  // apply-best's table of the AVX2 records, behind optune::gemm_u7, compiled for AVX2 and exact on
  // the tuned shape and on an untuned one (the default config).
  const std::string header = apply_best("capped at AVX2");
  EXPECT_NE(header.find("kGemmU7 = "), std::string::npos) << header;
  EXPECT_NE(header.find(".a7 = true"), std::string::npos) << header;
  const auto [status, out] = run_consumer(R"cpp(
#include <cstdio>
#include <vector>
#include "optune_tuned.hpp"
int main() {
  int wrong = 0;
  for (int m : {29, 33}) {
    const int n = 40, k = 132;
    std::vector<std::uint8_t> a(m * k);
    std::vector<std::int8_t> b(k * n);
    std::vector<std::int32_t> c(m * n), want(m * n, 0);
    for (int i = 0; i < m * k; ++i) a[i] = static_cast<std::uint8_t>(i * 37 % 128);
    for (int i = 0; i < k * n; ++i) b[i] = static_cast<std::int8_t>(i * 91 % 256 - 128);
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p)
        for (int j = 0; j < n; ++j) want[i * n + j] += a[i * k + p] * b[p * n + j];
    const bool tuned = optune::gemm_u7(m, n, k, a.data(), k, b.data(), n, c.data(), n);
    std::printf("M=%d %s %s\n", m, tuned ? "tuned" : "default", c == want ? "exact" : "WRONG");
    wrong += c != want || tuned != (m == 29);
  }
  return wrong;
}
)cpp",
                                          "-mavx2 -mfma");
  EXPECT_EQ(status, 0) << out;
}

// A consumer of apply-best's u7 convolution tables, compiled with BLOCK (0: NCHW tensors through
// optune::conv2d_u7; 8: NCHW8c through optune::conv2d_nchwc_u7<8>) and TUNED_C (the channels of
// the tuned layer, 13 x 11 x 9, stride 2): exact on that layer and on one no row holds, each
// against a plain loop, and tuned on the first only.
constexpr const char* kU7ConvolutionConsumer = R"cpp(
#include <cstdio>
#include <vector>
#include "optune_tuned.hpp"
using optune::kernels::cpu::Conv2dDims;
// Element (n, c, h, w) of a tensor of C channels of H x W in the layout.
long at(long C, long H, long W, long n, long c, long h, long w) {
  if (BLOCK == 0) return ((n * C + c) * H + h) * W + w;
  const long blocks = (C + BLOCK - 1) / BLOCK;
  return (((n * blocks + c / BLOCK) * H + h) * W + w) * BLOCK + c % BLOCK;
}
long elements(long N, long C, long H, long W) { return N * (BLOCK == 0 ? C : (C + BLOCK - 1) / BLOCK * BLOCK) * H * W; }
int main() {
  int wrong = 0;
  for (const Conv2dDims d : {Conv2dDims{1, TUNED_C, 11, 9, 20, 3, 3, 2, 1, 1}, Conv2dDims{1, 6, 7, 7, 9, 3, 3, 1, 1, 1}}) {
    const long P = d.out_h(), Q = d.out_w();
    std::vector<std::uint8_t> in(elements(d.N, d.C, d.H, d.W), 0);
    std::vector<std::int8_t> filter(d.K * d.C * d.R * d.S);
    std::vector<std::int32_t> out(elements(d.N, d.K, P, Q)), want(out.size(), 0);
    for (long n = 0; n < d.N; ++n)
      for (long c = 0; c < d.C; ++c)
        for (long h = 0; h < d.H; ++h)
          for (long w = 0; w < d.W; ++w)
            in[at(d.C, d.H, d.W, n, c, h, w)] = static_cast<std::uint8_t>((c * 31 + h * 7 + w) % 128);
    for (std::size_t i = 0; i < filter.size(); ++i) filter[i] = static_cast<std::int8_t>(i * 91 % 256 - 128);
    for (long n = 0; n < d.N; ++n)
      for (long k = 0; k < d.K; ++k)
        for (long p = 0; p < P; ++p)
          for (long q = 0; q < Q; ++q)
            for (long c = 0; c < d.C; ++c)
              for (long r = 0; r < d.R; ++r)
                for (long s = 0; s < d.S; ++s) {
                  const long h = p * d.stride - d.pad + r * d.dilation, w = q * d.stride - d.pad + s * d.dilation;
                  if (h < 0 || h >= d.H || w < 0 || w >= d.W) continue;
                  want[at(d.K, P, Q, n, k, p, q)] +=
                      in[at(d.C, d.H, d.W, n, c, h, w)] * filter[((k * d.C + c) * d.R + r) * d.S + s];
                }
#if BLOCK == 0
    const bool tuned = optune::conv2d_u7(d, in.data(), filter.data(), out.data());
#else
    const bool tuned = optune::conv2d_nchwc_u7<BLOCK>(d, in.data(), filter.data(), out.data());
#endif
    std::printf("C=%ld %s %s\n", static_cast<long>(d.C), tuned ? "tuned" : "default", out == want ? "exact" : "WRONG");
    wrong += out != want || tuned != (d.C == TUNED_C);
  }
  return wrong;
}
)cpp";

// u7 convolutions: the image's columns are B, the u8 operand, which AVX2's vpmaddubsw quads take in
// its unsigned slot. Every candidate exact, capped to AVX2 and not, on a padded strided layer whose
// depth (3 x 3 x 5) packs the filter and a dilated one whose depth (3 x 3 x 8) lets it be read in
// place; apply-best's kConv2dU7 table serves optune::conv2d_u7 to an AVX2 consumer, exact on the
// tuned layer and on an untuned one.
TEST_F(DtypeCliTest, SevenBitActivationsConvolutionIsExactOnAvx2QuadsAndElsewhere) {
  const auto records = tune_u7("conv2d", {"N=1,C=5,H=11,W=9,K=20,R=3,S=3,stride=2,pad=1",
                                          "N=2,C=8,H=10,W=10,K=16,R=3,S=3,pad=2,dilation=2"}, 3);
  ASSERT_GE(records.size(), 12u) << records.dump();
  for (const auto& record : records) {
    EXPECT_EQ(record["workload"].get<std::string>().rfind("conv2d.nchw.u7.", 0), 0u) << record.dump();
    EXPECT_EQ(record["template"], "conv2d_int8.cpu");
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
    EXPECT_EQ(record["config"]["activations"], "u7") << record.dump();
  }
  const std::string header = apply_best("capped at AVX2");
  EXPECT_NE(header.find("kConv2dU7 = "), std::string::npos) << header;
  EXPECT_NE(header.find(".a7 = true"), std::string::npos) << header;
  const auto [status, out] = run_consumer(kU7ConvolutionConsumer, "-mavx2 -mfma -DBLOCK=0 -DTUNED_C=5");
  EXPECT_EQ(status, 0) << out;
}

// u7 on the layout AVX2 code keeps (nchw8c) and on nchw16c: the direct convolution's vpmaddubsw
// path, capped to AVX2 and not (a VNNI CPU runs 8-channel blocks on it too, 16-channel ones on
// VNNI). Every candidate exact, on a strided layer with odd channels, a dilated one wider padded
// than its stride (read from a padded copy) and a 16-channel-block one; apply-best's
// kConv2dU7Nchwc serves optune::conv2d_nchwc_u7<8> to an AVX2 consumer, exact on the tuned layer
// and on one no row holds (the default config on 8-channel blocks).
TEST_F(DtypeCliTest, SevenBitActivationsDirectConvolutionIsExactOnNchw8cAndNchw16c) {
  const auto records = tune_u7("conv2d", {"N=1,C=13,H=11,W=9,K=20,R=3,S=3,stride=2,pad=1,layout=nchw8c",
                                          "N=2,C=8,H=10,W=10,K=16,R=3,S=3,pad=2,dilation=2,layout=nchw8c",
                                          "N=1,C=20,H=7,W=9,K=24,R=3,S=3,pad=1,layout=nchw16c"}, 3);
  ASSERT_GE(records.size(), 18u) << records.dump();
  for (const auto& record : records) {
    const std::string key = record["workload"];
    const bool blocks_of_8 = key.rfind("conv2d.nchw8c.u7.", 0) == 0;
    EXPECT_TRUE(blocks_of_8 || key.rfind("conv2d.nchw16c.u7.", 0) == 0) << key;
    EXPECT_EQ(record["template"], "conv2d_int8_direct.cpu");
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
    EXPECT_EQ(record["config"]["activations"], "u7") << record.dump();
    EXPECT_EQ(record["config"]["block"], blocks_of_8 ? "8" : "16") << record.dump();
  }
  const std::string header = apply_best("capped at AVX2");
  EXPECT_NE(header.find("kConv2dU7Nchwc = "), std::string::npos) << header;
  EXPECT_NE(header.find(".block = 8, .a7 = true"), std::string::npos) << header;
  const auto [status, out] = run_consumer(kU7ConvolutionConsumer, "-mavx2 -mfma -DBLOCK=8 -DTUNED_C=13");
  EXPECT_EQ(status, 0) << out;
}

TEST_F(DtypeCliTest, ATemplateNamedForAnotherDtypeIsBadInput) {
  expect_bad_input("tune --op gemm --shape 64,64,64 --dtype i8 --template gemm.cpu --target cpu --db " + db(),
                   "runs dtypes f32, f16, bf16, not i8");
  expect_bad_input("tune --op gemm --shape 64,64,64 --template gemm_int8.cpu --target cpu --db " + db(),
                   "not f32");
}

}  // namespace

namespace {

// Every CPU convolution in every low precision, on layers with padding, strides, dilation, a 1x1
// and a kept layout: each candidate is checked by the worker against the double reference
// (int8 exactly), so a record `ok` is a correct result. The templates are the ones the dtype and
// device call for: conv2d_int8.cpu for i8 (NCHW layers), conv2d_int8_direct.cpu for i8 on
// nchw16c, conv2d_bf16.cpu and conv2d_bf16_direct.cpu for bf16 where the CPU has avx512_bf16, the
// float32 kernels widened elsewhere; and the i8 records name their activations' signedness.
TEST_F(DtypeCliTest, ConvolutionsTuneAndCheckInEveryLowPrecision) {
  CommandRun space = optune("space --op gemm --shape 8,8,8 --dtype bf16 --target cpu --format json");
  ASSERT_EQ(space.code, 0) << space.err;
  const bool bf16_dot = nlohmann::json::parse(space.out)["template"] == "gemm_bf16.cpu";
  struct Case {
    std::string op, shape, dtype, expected_template;  // "" : a widened float32 template
  };
  std::vector<Case> cases = {
      {"conv2d", "N=2,C=13,H=9,W=11,K=21,R=3,S=3,stride=2,pad=1", "i8", "conv2d_int8.cpu"},
      {"conv2d", "N=1,C=6,H=10,W=9,K=17,R=3,S=2,pad=2,dilation=2", "i8", "conv2d_int8.cpu"},
      {"conv2d", "N=1,C=24,H=6,W=5,K=40,R=1,S=1", "i8", "conv2d_int8.cpu"},
      {"conv2d", "N=1,C=13,H=9,W=11,K=21,R=3,S=3,stride=2,pad=1", "bf16", bf16_dot ? "conv2d_bf16.cpu" : ""},
      {"conv2d", "N=1,C=13,H=9,W=11,K=21,R=3,S=3,pad=1", "f16", ""},
      {"conv2d", "N=1,C=16,H=7,W=6,K=32,R=3,S=3,pad=1,layout=nchw8c", "bf16", ""},
      {"depthwise_conv2d", "N=1,C=20,H=11,W=9,R=3,S=3,stride=2,pad=1", "i8", "depthwise_conv2d.cpu"},
      {"depthwise_conv2d", "N=1,C=12,H=9,W=10,R=5,S=5,pad=2", "bf16", "depthwise_conv2d.cpu"},
      {"depthwise_conv2d", "N=2,C=8,H=7,W=7,R=3,S=3,pad=1", "f16", "depthwise_conv2d.cpu"},
  };
  const bool sixteen_lanes = takes_nchw16c();
  if (sixteen_lanes) {
    cases.push_back({"conv2d", "N=2,C=20,H=9,W=11,K=37,R=3,S=3,stride=2,pad=1,layout=nchw16c", "i8",
                     "conv2d_int8_direct.cpu"});
    cases.push_back({"conv2d", "N=1,C=24,H=10,W=10,K=20,R=1,S=1,stride=2,layout=nchw16c", "i8",
                     "conv2d_int8_direct.cpu"});
  }
  if (sixteen_lanes && bf16_dot)
    cases.push_back({"conv2d", "N=1,C=40,H=7,W=9,K=48,R=3,S=2,pad=2,dilation=2,layout=nchw16c", "bf16",
                     "conv2d_bf16_direct.cpu"});
  for (const Case& c : cases) {
    CommandRun run = optune("tune --op " + c.op + " --shape " + c.shape + " --dtype " + c.dtype +
                            " --target cpu --tuner random --trials 3 --batch-size 3 --repeat 1 --min-repeat-ms 1 "
                            "--remeasure 0 --quiet --seed 4 --format json --db " + db());
    ASSERT_EQ(run.code, 0) << c.shape << " " << c.dtype << run.out << run.err;
    const std::string key = nlohmann::json::parse(run.out)["workload"];
    EXPECT_NE(key.find("." + c.dtype + "."), std::string::npos) << key;
    CommandRun history = optune("query --history --format json --op " + c.op + " --shape " + c.shape + " --dtype " +
                                c.dtype + " --db " + db());
    ASSERT_EQ(history.code, 0) << history.err;
    const auto records = nlohmann::json::parse(history.out);
    ASSERT_EQ(records.size(), 4u) << key << history.out;  // the default and 3 trials
    for (const auto& record : records) {
      EXPECT_EQ(record["error_kind"], "ok") << record.dump();
      const std::string name = record["template"];
      if (c.expected_template.empty())
        EXPECT_TRUE(name == "conv2d.cpu" || name == "conv2d_gemm.cpu") << key << " ran " << name;
      else
        EXPECT_EQ(name, c.expected_template) << key;
      if (c.dtype == "i8") EXPECT_TRUE(record["config"].contains("activations")) << record.dump();
    }
  }
}

// What the low-precision convolutions cannot run is bad input naming why: an int8 kept layout other
// than nchw16c (naming the template of that one), nchw16c without 16-lane vectors, a depthwise int8 filter whose float32 sums would
// not be exact, a float32 template named for i8.
TEST_F(DtypeCliTest, ConvolutionsRefuseWhatTheirPrecisionCannotRun) {
  expect_bad_input("tune --op conv2d --shape N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=nchw8c --dtype i8 "
                   "--target cpu --db " + db(), "conv2d_int8_direct.cpu");
  // nchw16c where the CPU's vectors are narrower than 16 lanes (AVX2): no template runs it, and the
  // message says which would with them.
  if (!takes_nchw16c())
    expect_bad_input("tune --op conv2d --shape N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=nchw16c --dtype i8 "
                     "--target cpu --db " + db(), "16-lane");
  expect_bad_input("tune --op depthwise_conv2d --shape N=1,C=4,H=40,W=40,R=23,S=23,pad=11 --dtype i8 --target cpu "
                   "--db " + db(), "514");
  expect_bad_input("tune --op conv2d --shape N=1,C=8,H=8,W=8,K=8,R=3,S=3 --dtype i8 --template conv2d.cpu "
                   "--target cpu --db " + db(), "not i8");
}

}  // namespace

namespace {

// A consumer of apply-best's header in low precision: optune::gemm on u8 x s8 -> int32 and on
// bf16, optune::conv2d on int8 (and on bf16 where the CPU has AVX-512 BF16: elsewhere the bf16
// conv2d is widened and has no table), each checked against a double reference (int8 exactly), and
// the dispatch each reports (a tuned row for the tuned shapes and the listed untuned one, the
// default for another); on the kept NCHW16c layout also through a filter packed once, whose every
// call gives the one-call entry's output. Prints one line per call; exits 1 on any wrong answer or
// dispatch.
constexpr const char* kLowPrecisionConsumer = R"(
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "optune_tuned.hpp"

namespace cpu = optune::kernels::cpu;
std::mt19937 rng(3);

template <typename T> std::vector<T> values(long n) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, cpu::bfloat16> || std::is_same_v<T, cpu::float16>) x = cpu::narrow<T>(std::uniform_real_distribution<float>(-1, 1)(rng));
    else x = static_cast<T>(std::uniform_int_distribution<int>(std::is_signed_v<T> ? -128 : 0, std::is_signed_v<T> ? 127 : 255)(rng));
  }
  return v;
}
double value(cpu::bfloat16 x) { return cpu::widen(x); }
double value(cpu::float16 x) { return cpu::widen(x); }
double value(long x) { return double(x); }
template <typename T> double value(T x) { return double(x); }

// Relative L2 error of got against want.
template <typename T> double error(const std::vector<T>& got, const std::vector<double>& want) {
  double e = 0, n = 0;
  for (size_t i = 0; i < want.size(); ++i) e += (value(got[i]) - want[i]) * (value(got[i]) - want[i]), n += want[i] * want[i];
  return std::sqrt(e / (n > 0 ? n : 1));
}

template <typename TA, typename TB, typename TC>
int gemm(long M, long N, long K, bool expect_tuned, double bound) {
  auto a = values<TA>(M * K);
  auto b = values<TB>(K * N);
  std::vector<TC> c(M * N);
  const bool tuned = optune::gemm(M, N, K, a.data(), K, b.data(), N, c.data(), N);
  std::vector<double> want(M * N, 0.0);
  for (long i = 0; i < M; ++i)
    for (long k = 0; k < K; ++k)
      for (long j = 0; j < N; ++j) want[i * N + j] += value(a[i * K + k]) * value(b[k * N + j]);
  const double e = error(c, want);
  std::printf("gemm %ldx%ldx%ld %s: %s, error %.3g\n", M, N, K, sizeof(TC) == 4 ? "int8" : "bf16", tuned ? "tuned" : "default", e);
  return e <= bound && tuned == expect_tuned ? 0 : 1;
}

// A conv2d (or, Depthwise, a depthwise conv2d: K = C, filter [C, 1, R, S]) through the header.
template <typename TIn, typename TW, typename TOut, bool Depthwise = false>
int conv(const cpu::Conv2dDims& d, bool expect_tuned, double bound) {
  auto in = values<TIn>(d.N * d.C * d.H * d.W);
  auto w = values<TW>(d.K * (Depthwise ? 1 : d.C) * d.R * d.S);
  const long P = d.out_h(), Q = d.out_w();
  std::vector<TOut> out(d.N * d.K * P * Q);
  bool tuned;
  if constexpr (Depthwise) tuned = optune::depthwise_conv2d(d, in.data(), w.data(), out.data());
  else tuned = optune::conv2d(d, in.data(), w.data(), out.data());
  std::vector<double> want(out.size(), 0.0);
  for (long n = 0; n < d.N; ++n) for (long k = 0; k < d.K; ++k) for (long p = 0; p < P; ++p) for (long q = 0; q < Q; ++q)
    for (long c = 0; c < d.C; ++c) for (long r = 0; r < d.R; ++r) for (long s = 0; s < d.S; ++s) {
      if (Depthwise && c != k) continue;
      const long h = p * d.stride - d.pad + r * d.dilation, x = q * d.stride - d.pad + s * d.dilation;
      const long tap = Depthwise ? (k * d.R + r) * d.S + s : ((k * d.C + c) * d.R + r) * d.S + s;
      if (h >= 0 && h < d.H && x >= 0 && x < d.W)
        want[((n * d.K + k) * P + p) * Q + q] += value(in[((n * d.C + c) * d.H + h) * d.W + x]) * value(w[tap]);
    }
  const double e = error(out, want);
  std::printf("%s K%ld %s: %s, error %.3g\n", Depthwise ? "depthwise" : "conv2d", long(d.K), sizeof(TOut) == 4 ? "int8" : "16-bit", tuned ? "tuned" : "default", e);
  return e <= bound && tuned == expect_tuned ? 0 : 1;
}

#ifdef WITH_NCHW16C
// The filter type apply-best's header gives a dtype's NCHW16c layers.
template <typename TW> struct PackedFilterOf;
template <> struct PackedFilterOf<std::int8_t> { using type = optune::Conv2dNchw16cInt8Filter; };
#ifdef WITH_BF16_CONV
template <> struct PackedFilterOf<cpu::bfloat16> { using type = optune::Conv2dNchw16cBf16Filter; };
#endif

// A conv2d on the kept NCHW16c layout through optune::conv2d_nchw16c: the NCHW operands blocked in
// and the output blocked out (channels past K must be zeros); then through the filter packed once,
// called twice, each call's output the same as the one-call entry's.
template <typename TIn, typename TW, typename TOut>
int conv_nchw16c(const cpu::Conv2dDims& d, bool expect_tuned, double bound) {
  auto in = values<TIn>(d.N * d.C * d.H * d.W);
  auto w = values<TW>(d.K * d.C * d.R * d.S);
  const long P = d.out_h(), Q = d.out_w(), in_blocks = (d.C + 15) / 16, out_blocks = (d.K + 15) / 16;
  std::vector<TIn> blocked_in(d.N * in_blocks * d.H * d.W * 16, TIn{});
  for (long n = 0; n < d.N; ++n) for (long c = 0; c < d.C; ++c) for (long p = 0; p < d.H * d.W; ++p)
    blocked_in[((n * in_blocks + c / 16) * d.H * d.W + p) * 16 + c % 16] = in[(n * d.C + c) * d.H * d.W + p];
  std::vector<TOut> out(d.N * out_blocks * P * Q * 16);
  const bool tuned = optune::conv2d_nchw16c(d, blocked_in.data(), w.data(), out.data());
  std::vector<double> want(out.size(), 0.0);
  for (long n = 0; n < d.N; ++n) for (long k = 0; k < d.K; ++k) for (long p = 0; p < P; ++p) for (long q = 0; q < Q; ++q)
    for (long c = 0; c < d.C; ++c) for (long r = 0; r < d.R; ++r) for (long s = 0; s < d.S; ++s) {
      const long h = p * d.stride - d.pad + r * d.dilation, x = q * d.stride - d.pad + s * d.dilation;
      if (h >= 0 && h < d.H && x >= 0 && x < d.W)
        want[((n * out_blocks + k / 16) * P * Q + p * Q + q) * 16 + k % 16] +=
            value(in[((n * d.C + c) * d.H + h) * d.W + x]) * value(w[((k * d.C + c) * d.R + r) * d.S + s]);
    }
  const double e = error(out, want);
  std::printf("conv2d_nchw16c K%ld %s: %s, error %.3g\n", long(d.K), sizeof(TOut) == 4 ? "int8" : "bf16", tuned ? "tuned" : "default", e);
  const typename PackedFilterOf<TW>::type filter(d, w.data());
  for (int call = 0; call < 2; ++call) {
    std::vector<TOut> again(out.size());
    const bool packed_tuned = filter(blocked_in.data(), again.data());
    const bool same = std::memcmp(again.data(), out.data(), out.size() * sizeof(TOut)) == 0;
    std::printf("packed filter, call %d: %s, %s\n", call, packed_tuned ? "tuned" : "default", same ? "same output" : "other output");
    if (!same || packed_tuned != tuned || filter.tuned() != tuned) return 1;
  }
  return e <= bound && tuned == expect_tuned ? 0 : 1;
}
#endif

int main() {
  const double bf16 = 2 * std::ldexp(1.0, -8) + 1000 * std::ldexp(1.0, -24);
  int failures = gemm<std::uint8_t, std::int8_t, std::int32_t>(29, 40, 132, true, 0) +
                 gemm<std::uint8_t, std::int8_t, std::int32_t>(31, 40, 132, true, 0) +   // listed, never tuned
                 gemm<std::uint8_t, std::int8_t, std::int32_t>(7, 9, 11, false, 0) +
                 gemm<cpu::bfloat16, cpu::bfloat16, cpu::bfloat16>(37, 45, 300, true, bf16) +
                 gemm<cpu::bfloat16, cpu::bfloat16, cpu::bfloat16>(5, 6, 7, false, bf16);
  const cpu::Conv2dDims layer{.N = 1, .C = 13, .H = 9, .W = 11, .K = 21, .R = 3, .S = 3, .stride = 1, .pad = 1};
  cpu::Conv2dDims other = layer;
  other.K = 8;
  failures += conv<std::uint8_t, std::int8_t, std::int32_t>(layer, true, 0) +
              conv<std::uint8_t, std::int8_t, std::int32_t>(other, false, 0);
#ifdef WITH_BF16_CONV
  failures += conv<cpu::bfloat16, cpu::bfloat16, cpu::bfloat16>(layer, true, bf16);
#endif
#ifdef WITH_NCHW16C
  // The kept layout: the tuned layer, and another (the default config).
  const cpu::Conv2dDims kept{.N = 1, .C = 20, .H = 9, .W = 11, .K = 21, .R = 3, .S = 3, .stride = 1, .pad = 1};
  cpu::Conv2dDims kept_other = kept;
  kept_other.stride = 2;
  failures += conv_nchw16c<std::uint8_t, std::int8_t, std::int32_t>(kept, true, 0) +
              conv_nchw16c<std::uint8_t, std::int8_t, std::int32_t>(kept_other, false, 0);
#ifdef WITH_BF16_CONV
  failures += conv_nchw16c<cpu::bfloat16, cpu::bfloat16, cpu::bfloat16>(kept, true, bf16);
#endif
#endif
  // The widened tables: a depthwise layer in int8 and a conv2d layer in f16.
  const cpu::Conv2dDims depthwise{.N = 1, .C = 12, .H = 9, .W = 10, .K = 12, .R = 3, .S = 3, .stride = 2, .pad = 1};
  failures += conv<std::uint8_t, std::int8_t, std::int32_t, true>(depthwise, true, 0);
  const cpu::Conv2dDims half{.N = 1, .C = 6, .H = 8, .W = 7, .K = 9, .R = 3, .S = 3, .stride = 1, .pad = 1};
  failures += conv<cpu::float16, cpu::float16, cpu::float16>(half, true, 2 * std::ldexp(1.0, -11) + 100 * std::ldexp(1.0, -24));
  return failures == 0 ? 0 : 1;
}
)";

TEST_F(DtypeCliTest, Int8AndBf16TablesAreCompiledIntoAConsumerThatGetsTheRightAnswers) {
  CommandRun space = optune("space --op conv2d --shape N=1,C=13,H=9,W=11,K=21,R=3,S=3,pad=1 --dtype bf16 --target cpu "
                            "--format json");
  ASSERT_EQ(space.code, 0) << space.err;
  const bool bf16_conv_table = nlohmann::json::parse(space.out)["template"] == "conv2d_bf16.cpu";
  std::vector<std::string> tunes = {"--op gemm --shape 29,40,132 --dtype i8", "--op gemm --shape 37,45,300 --dtype bf16",
                                    "--op conv2d --shape N=1,C=13,H=9,W=11,K=21,R=3,S=3,pad=1 --dtype i8"};
  if (bf16_conv_table) tunes.push_back("--op conv2d --shape N=1,C=13,H=9,W=11,K=21,R=3,S=3,pad=1 --dtype bf16");
  const bool sixteen_lanes = takes_nchw16c();
  if (sixteen_lanes) tunes.push_back("--op conv2d --shape N=1,C=20,H=9,W=11,K=21,R=3,S=3,pad=1,layout=nchw16c --dtype i8");
  if (sixteen_lanes && bf16_conv_table)
    tunes.push_back("--op conv2d --shape N=1,C=20,H=9,W=11,K=21,R=3,S=3,pad=1,layout=nchw16c --dtype bf16");
  tunes.push_back("--op depthwise_conv2d --shape N=1,C=12,H=9,W=10,R=3,S=3,stride=2,pad=1 --dtype i8");
  tunes.push_back("--op conv2d --shape N=1,C=6,H=8,W=7,K=9,R=3,S=3,pad=1 --dtype f16");
  for (const auto& tune : tunes) {
    CommandRun run = optune("tune " + tune + " --target cpu --tuner random --trials 2 --batch-size 2 --repeat 1 "
                            "--min-repeat-ms 1 --remeasure 0 --quiet --seed 6 --db " + db());
    ASSERT_EQ(run.code, 0) << tune << run.out << run.err;
  }
  CommandRun apply = optune("apply-best --target cpu --db " + db() + " --workload gemm.i8.M31.N40.K132 --out " +
                            (dir() / "optune_tuned.hpp").string());
  ASSERT_EQ(apply.code, 0) << apply.err;
  const std::string header = optune::test_support::slurp(dir() / "optune_tuned.hpp");
  EXPECT_NE(header.find("kGemmInt8 = "), std::string::npos) << header;
  EXPECT_NE(header.find("{29, 40, 132, optune::kernels::cpu::GemmInt8Config{"), std::string::npos) << header;
  EXPECT_NE(header.find("gemm.i8.M31.N40.K132: never tuned"), std::string::npos) << header;
  EXPECT_NE(header.find("kConv2dInt8 = "), std::string::npos) << header;
  EXPECT_EQ(header.find("kConv2dInt8Nchw16c = ") != std::string::npos, sixteen_lanes) << header;
  EXPECT_EQ(header.find("kConv2dBf16Nchw16c = ") != std::string::npos, sixteen_lanes && bf16_conv_table) << header;
  EXPECT_EQ(header.find("using Conv2dNchw16cInt8Filter = ") != std::string::npos, sixteen_lanes) << header;
  EXPECT_EQ(header.find("kGemmF16"), std::string::npos) << "no f16 GEMM records, no f16 GEMM table";
  EXPECT_NE(header.find("kDepthwiseConv2dInt8 = "), std::string::npos) << header;
  EXPECT_NE(header.find("kConv2dF16 = "), std::string::npos) << header;
  EXPECT_EQ(header.find("kConv2dBf16Widened"), std::string::npos) << "the dot or no bf16 conv2d table, never both";
  const auto [status, out] = run_consumer(kLowPrecisionConsumer, std::string("-march=native") +
                                                                       (bf16_conv_table ? " -DWITH_BF16_CONV" : "") +
                                                                       (sixteen_lanes ? " -DWITH_NCHW16C" : ""));
  EXPECT_EQ(status, 0) << out;
  // The kept layout's layers ran through their packed filters too (the tuned one, then the default).
  EXPECT_EQ(out.find("packed filter, call 1: tuned, same output") != std::string::npos, sixteen_lanes) << out;
  EXPECT_EQ(out.find("packed filter, call 1: default, same output") != std::string::npos, sixteen_lanes) << out;
}

}  // namespace

namespace {

// --dtype with --suite: every workload of the file that names no dtype of its own is tuned in it.
TEST_F(DtypeCliTest, ASuiteIsTunedInTheDtypeGiven) {
  const auto suite = std::filesystem::path(db()).parent_path() / "net.toml";
  std::ofstream(suite) << "name = \"net\"\n"
                          "[[workload]]\nname = \"fc\"\nop = \"gemm\"\nshape = \"3,40,68\"\n"
                          "[[workload]]\nname = \"conv\"\nop = \"conv2d\"\nshape = \"C=8,H=6,W=6,K=8,R=3,S=3,pad=1\"\n"
                          "[[workload]]\nname = \"pinned\"\nop = \"gemm\"\nshape = \"4,8,16\"\ndtype = \"f32\"\n";
  CommandRun run = optune("tune --suite " + suite.string() + " --dtype i8 --budget 6 --tuner random --batch-size 2 "
                          "--repeat 1 --min-repeat-ms 1 --remeasure 0 --quiet --seed 2 --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const auto records = nlohmann::json::parse(optune("query --history --format json --db " + db()).out);
  std::set<std::string> keys;
  for (const auto& record : records) {
    keys.insert(record["workload"].get<std::string>());
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
  }
  EXPECT_EQ(keys, (std::set<std::string>{"gemm.i8.M3.N40.K68", "conv2d.nchw.i8.N1.C8.H6.W6.K8.R3.S3.st1.pad1.dil1.g1",
                                         "gemm.f32.M4.N8.K16"}));
  expect_bad_input("tune --kernel " + std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/reduction.toml --dtype i8 --db " +
                       db(), "--dtype goes with --shape or --suite");
}

}  // namespace
