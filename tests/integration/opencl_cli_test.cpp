// `optune --target opencl` end to end on this machine's OpenCL device (PoCL in CI): tune on a tiny
// budget into a real database, then space, query and apply-best on the same target; bad OpenCL
// targets are bad input.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../support/command_test.hpp"

namespace {

namespace fs = std::filesystem;

using optune::test_support::CommandRun;
using optune::test_support::slurp;

class OpenCLCliTest : public optune::test_support::CommandTest {
 protected:
  // The program cache goes under the test's directory, not the user's ~/.cache; with PoCL's own
  // cache off, so that PoCL gets optune's (program_cache.hpp).
  CommandRun optune(const std::string& arguments) {
    return CommandTest::optune(arguments, "POCL_KERNEL_CACHE=0 XDG_CACHE_HOME=" + (dir_ / "cache").string());
  }
};

TEST_F(OpenCLCliTest, TunesOnOpenCLThenSpaceQueryAndApplyBestWorkOnTheSameTarget) {
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
  EXPECT_TRUE(fs::exists(dir_ / "cache" / "optune" / "programs"));

  // apply-best: the best record's knobs as the row's -D build options; the untuned workload noted.
  const fs::path header = dir_ / "tuned.hpp";
  const CommandRun apply = optune("apply-best --target opencl --workload gemm.f32.M8.N8.K8 --workload gemm.f32.M40.N20.K12 "
                                  "--out " + header.string() +
                                  " --db " + db());
  ASSERT_EQ(apply.code, 0) << apply.err;
  EXPECT_NE(apply.err.find("no tuned config for gemm.f32.M8.N8.K8"), std::string::npos) << apply.err;
  const std::string text = slurp(header);
  EXPECT_NE(text.find("{\"gemm.f32.M33.N17.K9\", \"gemm.cl\", \"optune_gemm\",\n     \"-DM=33 -DN=17 -DK=9 -DMWG="),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inline opencl::Launch gemm(opencl::Runtime& runtime"), std::string::npos) << text;
  const auto best = nlohmann::json::parse(optune("query --target opencl --top 1 --format json --db " + db()).out);
  ASSERT_EQ(best.size(), 1u);
  for (const auto& [knob, value] : best[0]["config"].items()) {
    // Without a split the program is built as before split-K existed: no SPLITK define.
    if (knob == "splitk" && value == "1") continue;
    std::string define = "-D" + knob + "=" + value.get<std::string>() + " ";
    std::transform(define.begin(), define.begin() + 2 + knob.size(), define.begin(), ::toupper);
    EXPECT_NE(text.find(define), std::string::npos) << define << " in " << text;
  }

  // The untuned listed shapes: pick and the table agree. A row, when there is one, has the config
  // of the tuned shape pick names; a shape whose space refuses 33x17x9's config (8x8x8, smaller
  // than its tiles) runs the default and has none.
  for (const std::string shape : {"8,8,8", "40,20,12"}) {
    const CommandRun pick = optune("pick --op gemm --shape " + shape + " --target opencl --format json --db " + db());
    ASSERT_EQ(pick.code, 0) << pick.err;
    const auto picked = nlohmann::json::parse(pick.out);
    const std::string key = picked["workload"].get<std::string>();
    const bool has_row = text.find("{\"" + key + "\", \"gemm.cl\"") != std::string::npos;
    if (picked["source"] == "nearest") {
      EXPECT_EQ(picked["from_workload"], "gemm.f32.M33.N17.K9");
      EXPECT_TRUE(has_row) << text;
      EXPECT_NE(text.find(key + ": never tuned; the config tuned for gemm.f32.M33.N17.K9"), std::string::npos) << text;
    } else {
      EXPECT_EQ(picked["source"], "default") << pick.out;
      EXPECT_FALSE(has_row) << text;
    }
  }

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

namespace {

// Low precision on OpenCL end to end: an int8 conv2d and a bf16 depthwise layer tune into one
// database (every record checked: int8 exactly, and naming its s8 activations), then apply-best
// writes each dtype's table and entry point (the dtype in the name: cl_mem carries no type) with
// the tuned rows, and no row of either in the f32 tables.
TEST_F(OpenCLCliTest, LowPrecisionLayersTuneAndGetTablesOfTheirDtype) {
  const std::string conv = "N=1,C=6,H=9,W=10,K=5,R=3,S=3,stride=1,pad=1";
  const std::string depthwise = "N=1,C=7,H=11,W=9,R=3,S=3,stride=2,pad=1";
  for (const std::string& run : {"--op conv2d --shape " + conv + " --dtype i8",
                                 "--op depthwise_conv2d --shape " + depthwise + " --dtype bf16"}) {
    const CommandRun tune = optune("tune " + run + " --target opencl --tuner random --trials 2 --batch-size 2 "
                                   "--remeasure 0 --repeat 2 --min-repeat-ms 1 --quiet --db " + db());
    ASSERT_EQ(tune.code, 0) << run << tune.out << tune.err;
  }
  const auto records = nlohmann::json::parse(optune("query --target opencl --history --format json --db " + db()).out);
  ASSERT_GE(records.size(), 4u);
  std::string conv_key, depthwise_key;
  for (const auto& record : records) {
    EXPECT_EQ(record["error_kind"], "ok") << record.dump();
    const std::string key = record["workload"];
    if (record["template"] == "conv2d.opencl") {
      conv_key = key;
      EXPECT_EQ(key.rfind("conv2d.nchw.i8.", 0), 0u) << key;
      EXPECT_EQ(record["config"].value("activations", ""), "s8") << record.dump();
      EXPECT_EQ(record["check_error"], 0.0) << record.dump();
    } else {
      depthwise_key = key;
      EXPECT_NE(key.find(".bf16."), std::string::npos) << key;
      EXPECT_FALSE(record["config"].contains("activations")) << record.dump();
    }
  }
  ASSERT_FALSE(conv_key.empty());
  ASSERT_FALSE(depthwise_key.empty());

  const fs::path header = dir_ / "lowp.hpp";
  const CommandRun apply = optune("apply-best --target opencl --out " + header.string() + " --db " + db());
  ASSERT_EQ(apply.code, 0) << apply.err;
  const std::string text = slurp(header);
  EXPECT_NE(text.find("kConv2dI8 = {{\n    {\"" + conv_key + "\", \"conv2d.cl\""), std::string::npos) << text;
  EXPECT_NE(text.find("-DOPTUNE_I8"), std::string::npos) << text;
  EXPECT_NE(text.find("inline opencl::Launch conv2d_i8(opencl::Runtime& runtime"), std::string::npos) << text;
  EXPECT_NE(text.find("kernels::DataType::kI8"), std::string::npos) << text;
  EXPECT_NE(text.find("kDepthwiseConv2dBf16 = {{\n    {\"" + depthwise_key + "\", \"depthwise_conv2d.cl\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("inline opencl::Launch depthwise_conv2d_bf16(opencl::Runtime& runtime"), std::string::npos)
      << text;
  EXPECT_NE(text.find("kConv2d = {{\n}}"), std::string::npos) << text;  // no f32 rows
}

}  // namespace
