// optune measure (issue 38): given configs of one workload timed interleaved, each with its
// median's interval, recorded as tuner "measure"; the default and pick's config by name; bad
// configs refused as bad input before anything is measured or written.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "command_test.hpp"
#include "optune/db/database.hpp"

namespace {

using optune::test_support::CommandRun;
using optune::test_support::CommandTest;

constexpr const char* kShape = " --op gemm --shape 64,48,40";
constexpr const char* kQuick = " --repeat 3 --min-repeat-ms 1 --timeout 20";
constexpr const char* kGiven =
    R"('{"lanes":"8","loop_order":"pc_jc_ic","mr":4,"nr":8,"pack_a":true,"pack_b":false,"parallel_loop":"jc",)"
    R"("threads":1,"tile_kc":[1,64],"tile_mc":[1,64],"tile_nc":[1,128],"unroll_k":"2"}')";

class MeasureCliTest : public CommandTest {
 protected:
  nlohmann::json measure(const std::string& arguments) {
    CommandRun run = optune("measure" + std::string(kShape) + kQuick + " --format json --db " + db() + " " + arguments);
    EXPECT_EQ(run.code, 0) << run.out << run.err;
    return nlohmann::json::parse(run.out);
  }
  std::vector<optune::db::TuningRecord> records() {
    return optune::db::Database::open(db(), optune::db::Database::Mode::kReadOnly).records({});
  }
};

TEST_F(MeasureCliTest, GivenAndDefaultConfigsAreTimedInterleavedWithIntervalsAndRecorded) {
  const auto out = measure("--config " + std::string(kGiven) + " --default --rounds 3");
  EXPECT_EQ(out["workload"], "gemm.f32.M64.N48.K40");
  EXPECT_EQ(out["rounds"], 3);
  ASSERT_EQ(out["configs"].size(), 2u) << out.dump(2);
  EXPECT_EQ(out["configs"][0]["source"], "given");
  EXPECT_EQ(out["configs"][0]["config"]["loop_order"], "pc_jc_ic");
  EXPECT_EQ(out["configs"][1]["source"], "default");
  for (const auto& measured : out["configs"]) {
    const auto& record = measured["record"];
    ASSERT_EQ(record["error_kind"], "ok") << record.dump(2);
    const double median = record["median_seconds"], low = measured["interval_seconds"][0],
                 high = measured["interval_seconds"][1];
    EXPECT_GT(median, 0);
    EXPECT_LE(low, median);
    EXPECT_GE(high, median);
    EXPECT_EQ(record["costs"].size(), 9u) << "3 repeats in each of 3 rounds";
    EXPECT_EQ(record["tuner"], "measure");
  }
  const auto stored = records();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].is_default + stored[1].is_default, 1) << "the default config's record says so";
}

TEST_F(MeasureCliTest, TheDefaultGivenTwiceIsMeasuredOnceUnderBothNames) {
  CommandRun space = optune("space" + std::string(kShape) + " --format json");
  ASSERT_EQ(space.code, 0) << space.err;
  const std::string default_config = nlohmann::json::parse(space.out)["default_config"].dump();
  const auto out = measure("--config '" + default_config + "' --default --rounds 1");
  ASSERT_EQ(out["configs"].size(), 1u) << out.dump(2);
  EXPECT_EQ(out["configs"][0]["source"], "given, default");
  EXPECT_EQ(records().size(), 1u);
}

TEST_F(MeasureCliTest, FromPickMeasuresTheTunedBest) {
  CommandRun tune = optune("tune" + std::string(kShape) + kQuick + " --trials 3 --remeasure 0 --db " + db());
  ASSERT_EQ(tune.code, 0) << tune.out << tune.err;
  CommandRun pick = optune("pick" + std::string(kShape) + " --format json --db " + db());
  ASSERT_EQ(pick.code, 0) << pick.err;
  const auto picked = nlohmann::json::parse(pick.out);
  const auto out = measure("--from pick --rounds 2");
  ASSERT_EQ(out["configs"].size(), 1u);
  EXPECT_EQ(out["configs"][0]["source"], "pick: tuned");
  EXPECT_EQ(out["configs"][0]["config"], picked["config"]);
}

TEST_F(MeasureCliTest, BadConfigsAreBadInputAndNothingIsWritten) {
  const std::string base = "measure" + std::string(kShape) + " --db " + db() + " ";
  expect_bad_input(base + "--config 'not json'", "--config is not JSON");
  expect_bad_input(base + "--config '[1, 2]'", "must be a JSON object");
  expect_bad_input(base + "--config '{\"nope\": 1}'", "unknown knob 'nope'");
  expect_bad_input(base + "--rounds 3", "nothing to measure");
  expect_bad_input(base + "--default --rounds 0", "--rounds");
  expect_bad_input(base + "--from tuned --default", "--from");
  expect_bad_input("measure --op gemm --default --db " + db(), "--shape");
  expect_bad_input("measure --op gemm --shape 64,x,40 --default --db " + db(), "shape");
  // A config of the right knobs that breaks a rule of the space (tiles of more threads than run).
  std::string broken = kGiven;
  broken.replace(broken.find("\"threads\":1"), 11, "\"threads\":7");
  expect_bad_input(base + "--config " + broken, "threads");
  EXPECT_FALSE(std::filesystem::exists(db())) << "a refused measurement wrote a database";
}

}  // namespace
