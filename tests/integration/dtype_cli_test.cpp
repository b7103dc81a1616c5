// Low-precision operators end to end: `--dtype` (or a shape's dtype= item) tunes, checks and
// records a bf16 or f16 CPU GEMM under its own key; a dtype no template runs is bad input naming
// those that are.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/command_test.hpp"

namespace {

using optune::test_support::CommandRun;

class DtypeCliTest : public optune::test_support::CommandTest {};

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
  expect_bad_input("tune --op conv2d --shape N=1,C=8,H=8,W=8,K=8,R=3,S=3 --dtype bf16 --target cpu --db " + db(),
                   "runs f32");
  expect_bad_input("tune --op gemm --shape 64,64,64 --dtype u16 --target cpu --db " + db(), "bf16");
  expect_bad_input("tune --op gemm --shape 64,64,64 --dtype q4 --target cpu --db " + db(), "not a dtype");
  expect_bad_input("tune --op gemm --shape M=64,N=64,K=64,dtype=f16 --dtype bf16 --target cpu --db " + db(),
                   "dtype given twice");
  expect_bad_input("space --op gemm --shape 64,64,64 --dtype i64 --target cpu", "runs");
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

TEST_F(DtypeCliTest, ATemplateNamedForAnotherDtypeIsBadInput) {
  expect_bad_input("tune --op gemm --shape 64,64,64 --dtype i8 --template gemm.cpu --target cpu --db " + db(),
                   "runs dtypes f32, f16, bf16, not i8");
  expect_bad_input("tune --op gemm --shape 64,64,64 --template gemm_int8.cpu --target cpu --db " + db(),
                   "not f32");
}

}  // namespace
