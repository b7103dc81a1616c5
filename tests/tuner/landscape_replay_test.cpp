// xgb against random and ga, replayed over a landscape measured live on this project's CPU GEMM
// space (tests/data/gemm_landscape.jsonl: random configs of three shapes with their GFLOP/s). The
// replay is deterministic, so this is a fixed statistical comparison over seeds, not a timing.
#include "optune/tuner/replay/landscape_replay.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace optune::tuner {
namespace {

class LandscapeReplayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = std::filesystem::temp_directory_path() / ("optune-landscape-" + std::to_string(::getpid()) + ".db");
    auto database = db::Database::open(path_.string());
    std::ifstream in(std::string(OPTUNE_SOURCE_DIR) + "/tests/data/gemm_landscape.jsonl");
    ASSERT_TRUE(in) << "missing tests/data/gemm_landscape.jsonl";
    database.import_jsonl(in);
    landscapes_ = load_landscapes(database);
  }
  static void TearDownTestSuite() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }
  static std::filesystem::path path_;
  static std::vector<Landscape> landscapes_;
};
std::filesystem::path LandscapeReplayTest::path_;
std::vector<Landscape> LandscapeReplayTest::landscapes_;

double median_trials(const Landscape& landscape, const std::string& tuner, std::size_t budget) {
  std::vector<double> trials;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto run = replay(landscape, tuner, seed, budget, 8, 0.95 * landscape.best);
    trials.push_back(run.trials_to_target ? run.trials_to_target : budget + 1);
  }
  std::sort(trials.begin(), trials.end());
  return trials[2];
}

TEST_F(LandscapeReplayTest, LandscapeHasThreeShapesOfMeasuredConfigs) {
  ASSERT_EQ(landscapes_.size(), 3u);
  for (const auto& landscape : landscapes_) {
    EXPECT_GE(landscape.configs.size(), 500u);
    EXPECT_GT(landscape.best, 0);
  }
}

TEST_F(LandscapeReplayTest, XgbNeedsFewerTrialsThanRandomOnEveryShape) {
  constexpr std::size_t kBudget = 300;
  double xgb_total = 0, random_total = 0;
  for (const auto& landscape : landscapes_) {
    double xgb = median_trials(landscape, "xgb", kBudget);
    double random = median_trials(landscape, "random", kBudget);
    std::printf("%s: median trials to 95%% of the best, xgb %.0f, random %.0f\n",
                landscape.task->workload.key().c_str(), xgb, random);
    EXPECT_LT(xgb, random) << landscape.task->workload.key();
    xgb_total += xgb;
    random_total += random;
  }
  EXPECT_LT(xgb_total * 2, random_total);
}

}  // namespace
}  // namespace optune::tuner
