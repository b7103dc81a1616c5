// `optune --target opencl` end to end on this machine's OpenCL device (PoCL in CI): tune on a tiny
// budget into a real database, then space and query on the same target; bad OpenCL targets are
// bad input.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct CommandRun {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class OpenCLCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("optune-opencl-cli-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The program cache goes under the test's directory, not the user's ~/.cache.
  CommandRun optune(const std::string& arguments) {
    const std::string command = "XDG_CACHE_HOME=" + (dir_ / "cache").string() + " " + OPTUNE_EXECUTABLE + " " +
                                arguments + " > " + (dir_ / "out").string() + " 2> " + (dir_ / "err").string();
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "out"), slurp(dir_ / "err")};
  }
  std::string db() const { return (dir_ / "optune.db").string(); }
  fs::path dir_;
};

TEST_F(OpenCLCliTest, TunesOnOpenCLThenSpaceAndQueryWorkOnTheSameTarget) {
  const CommandRun tune = optune("tune --op gemm --shape 33,17,9 --target opencl --tuner random --trials 3 "
                                 "--batch-size 3 --remeasure 1 --repeat 2 --min-repeat-ms 1 --quiet --db " + db());
  ASSERT_EQ(tune.code, 0) << tune.out << tune.err;
  EXPECT_NE(tune.out.find("gemm.f32.M33.N17.K9 on opencl"), std::string::npos) << tune.out;
  EXPECT_NE(tune.out.find("GFLOP/s"), std::string::npos) << tune.out;

  const CommandRun query = optune("query --target opencl --history --format json --db " + db());
  ASSERT_EQ(query.code, 0) << query.err;
  const auto records = nlohmann::json::parse(query.out);
  ASSERT_GE(records.size(), 4u);  // the default config and three trials, then a re-measure
  for (const auto& record : records) {
    EXPECT_EQ(record["template"], "gemm.opencl");
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
    EXPECT_NE(record["error_message"].get<std::string>().find("host->device"), std::string::npos) << record.dump();
  }
  EXPECT_TRUE(fs::exists(dir_ / "cache" / "optune" / "opencl"));

  const CommandRun space = optune("space --op depthwise_conv2d --shape N=1,C=8,H=9,W=9,R=3,S=3,stride=2,pad=1 "
                                  "--target opencl");
  ASSERT_EQ(space.code, 0) << space.err;
  EXPECT_NE(space.out.find("depthwise_conv2d.opencl"), std::string::npos) << space.out;
  EXPECT_NE(space.out.find("local_in"), std::string::npos) << space.out;
}

TEST_F(OpenCLCliTest, UnknownOpenCLDeviceIsBadInputNamingTheDevicesThereAre) {
  const CommandRun run = optune("tune --op gemm --shape 8,8,8 --target opencl:0:no-such-device --db " + db());
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_NE(run.err.find("no device matches target 'opencl:0:no-such-device'"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_FALSE(fs::exists(db()));
}

}  // namespace
