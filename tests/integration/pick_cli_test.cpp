// optune pick, apply-best and tune on shapes never tuned (issue 22 item 4), end to end on this
// machine's CPU with real tuning and a real database: an untuned shape between tuned ones runs
// the config of one of them (`nearest`), in pick and in the generated header alike; a shape
// range tunes its representative shapes; bad shapes and ranges are refused with one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::test_support::CommandRun;
using optune::test_support::slurp;

class PickCliTest : public optune::test_support::CommandTest {
 protected:
  std::string tune_options() const {
    return " --trials 3 --batch-size 3 --repeat 2 --min-repeat-ms 1 --remeasure 0 --quiet --db " + db();
  }
  nlohmann::json pick(const std::string& shape) {
    CommandRun run = optune("pick --op gemm --shape " + shape + " --format json --db " + db());
    EXPECT_EQ(run.code, 0) << run.err;
    return nlohmann::json::parse(run.out);
  }
  // The text of a CPU GEMM row after its shape, "{...config...}", for the row of `m, n, k`.
  static std::string row_config(const std::string& header, const std::string& shape) {
    const std::string start = "    {" + shape + ", ";
    const auto at = header.find(start);
    if (at == std::string::npos) return "";
    return header.substr(at + start.size(), header.find("},  //", at) - at - start.size());
  }
};

// M=16 and M=32 are tuned, M=24 never: every config of the tuned shapes is valid at M=24 (their
// blocks are at most 128, which the space allows for any M), so pick's source is the tuned
// shape's own best and the header's row of M=24 is that shape's row with M=24.
TEST_F(PickCliTest, UntunedShapeBetweenTunedOnesRunsTheNearestTunedConfig) {
  ASSERT_EQ(optune("tune --op gemm --shape 16,64,64" + tune_options()).code, 0);
  ASSERT_EQ(optune("tune --op gemm --shape 32,64,64" + tune_options()).code, 0);

  const auto tuned = pick("16,64,64");
  EXPECT_EQ(tuned["source"], "tuned");
  const auto best = nlohmann::json::parse(optune("query --op gemm --shape 16,64,64 --format json --db " + db()).out);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(tuned["config"], best[0]["config"]);

  const auto nearest = pick("24,64,64");
  EXPECT_EQ(nearest["source"], "nearest") << nearest.dump();
  EXPECT_EQ(nearest["workload"], "gemm.f32.M24.N64.K64");
  const std::string from = nearest["from_workload"].get<std::string>();
  EXPECT_TRUE(from == "gemm.f32.M16.N64.K64" || from == "gemm.f32.M32.N64.K64") << from;
  const std::string from_shape = from == "gemm.f32.M16.N64.K64" ? "16,64,64" : "32,64,64";
  const auto from_best = nlohmann::json::parse(optune("query --op gemm --shape " + from_shape +
                                                      " --format json --db " + db()).out);
  ASSERT_EQ(from_best.size(), 1u);
  EXPECT_EQ(nearest["record"]["config"], from_best[0]["config"]);  // that shape's best config ...
  auto expected = from_best[0]["config"];
  for (const char* split : {"tile_mc", "tile_nc", "tile_kc"}) {  // ... its blocks counted for M=24
    const auto block = expected[split][1].get<std::int64_t>();
    const std::int64_t extent = std::string(split) == "tile_mc" ? 24 : 64;
    expected[split][0] = (extent + block - 1) / block;
  }
  EXPECT_EQ(nearest["config"], expected);
  CommandRun table = optune("pick --op gemm --shape M=24,N=64,K=64 --db " + db());
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("source     nearest: the config tuned for " + from), std::string::npos) << table.out;

  // apply-best: the listed untuned shape gets a row of that config, named as such; the default
  // row stays for shapes not listed.
  const fs::path header = dir_ / "tuned.hpp";
  CommandRun apply = optune("apply-best --target cpu --workload gemm.f32.M24.N64.K64 --workload gemm.f32.M16.N64.K64 "
                            "--out " + header.string() + " --db " + db());
  ASSERT_EQ(apply.code, 0) << apply.err;
  EXPECT_NE(apply.err.find("no tuned config for gemm.f32.M24.N64.K64"), std::string::npos) << apply.err;
  EXPECT_NE(apply.err.find("nearest tuned shape"), std::string::npos) << apply.err;
  const std::string text = slurp(header);
  EXPECT_NE(text.find("// gemm.f32.M24.N64.K64: never tuned; the config tuned for " + from), std::string::npos) << text;
  const std::string untuned_row = row_config(text, "24, 64, 64");
  ASSERT_FALSE(untuned_row.empty()) << text;
  EXPECT_EQ(untuned_row, row_config(text, from_shape.substr(0, 2) + ", 64, 64")) << text;
  EXPECT_NE(text.find("kGemmDefault"), std::string::npos) << text;
}

TEST_F(PickCliTest, NothingTunedPicksTheDefault) {
  std::ofstream(dir_ / "empty.jsonl").close();
  ASSERT_EQ(optune("import " + (dir_ / "empty.jsonl").string() + " --db " + db()).code, 0);  // an empty database
  const auto picked = pick("24,64,64");
  EXPECT_EQ(picked["source"], "default");
  EXPECT_EQ(picked["template"], "gemm.cpu");
  EXPECT_TRUE(picked["record"].is_null());
  EXPECT_FALSE(picked["config"].empty());
  // A device never recorded has no default to tell: bad input, not this machine's default.
  expect_bad_input("pick --op gemm --shape 24,64,64 --device no-such-device --db " + db(),
                   "no records of target cpu match device 'no-such-device'");
  // A remote target without records: nothing to read its device from, and pick has no --rpc.
  expect_bad_input("pick --op gemm --shape 1,2,3 --target cpu:aarch64-linux-gnu --db " + db(),
                   "holds no records of target cpu:aarch64-linux-gnu to read its device from");
}

TEST_F(PickCliTest, RejectsBadShapeAndOperatorWithOneLine) {
  expect_bad_input("pick --op gemm --shape 1,2 --db " + db(), "shape");
  expect_bad_input("pick --op gemmm --shape 1,2,3 --db " + db(), "gemmm");
  expect_bad_input("pick --op gemm --shape M=1..8,N=2,K=3 --db " + db(), "M");
  // Workloads no template runs are refused by apply-best as by pick, not written as default rows.
  const std::string out = " --out " + (dir_ / "tuned.hpp").string() + " --db " + db();
  expect_bad_input("apply-best --target cpu --workload gemm.i32.M8.N8.K8" + out, "gemm on cpu runs");
  expect_bad_input("apply-best --target cpu --workload conv2d.nchw.f32.N1.C16.H8.W8.K16.R3.S3.st1.pad1.dil1.g2" + out,
                   "groups");
  EXPECT_FALSE(fs::exists(dir_ / "tuned.hpp"));
}

// A range of M tunes its representative shapes (M = 1, 2, 4, 8, 16: log-spaced, both ends), the
// trials split among them; a shape inside the range is then covered by one of them.
TEST_F(PickCliTest, RangeTunesItsRepresentativeShapesAndCoversTheRest) {
  CommandRun run = optune("tune --op gemm --shape M=1..16,N=16,K=16 --trials 5 --batch-size 2 --repeat 2 "
                          "--min-repeat-ms 1 --remeasure 0 --quiet --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("5 representative shapes (M=1,N=16,K=16; M=2,N=16,K=16; M=4,N=16,K=16; M=8,N=16,K=16; "
                         "M=16,N=16,K=16)"),
            std::string::npos) << run.out;
  const auto history = nlohmann::json::parse(optune("query --history --format json --db " + db()).out);
  std::set<std::string> workloads;
  for (const auto& record : history) workloads.insert(record["workload"].get<std::string>());
  EXPECT_EQ(workloads, (std::set<std::string>{"gemm.f32.M1.N16.K16", "gemm.f32.M2.N16.K16", "gemm.f32.M4.N16.K16",
                                              "gemm.f32.M8.N16.K16", "gemm.f32.M16.N16.K16"}));
  EXPECT_EQ(history.size(), 5u + 5u);  // each shape's default config and the 5 trials, one each
  const auto picked = pick("M=11,N=16,K=16");
  EXPECT_EQ(picked["source"], "nearest") << picked.dump();
  EXPECT_TRUE(workloads.count(picked["from_workload"].get<std::string>())) << picked.dump();
}

TEST_F(PickCliTest, RejectsEmptyAndMalformedRangesWithOneLine) {
  const std::string rest = " --trials 2 --quiet --db " + db();
  expect_bad_input("tune --op gemm --shape M=512..1,N=768,K=768" + rest, "shape range 'M=512..1' is empty: 512 > 1");
  expect_bad_input("tune --op gemm --shape M=1..,N=768,K=768" + rest, "shape range 'M=1..' is malformed");
  expect_bad_input("tune --op gemm --shape M=1...8,N=768,K=768" + rest, "shape range 'M=1...8' is malformed");
  expect_bad_input("tune --op gemm --shape M=x..8,N=768,K=768" + rest, "shape range 'M=x..8' is malformed");
  expect_bad_input("tune --op gemm --shape M=0..8,N=768,K=768" + rest, "shape range 'M=0..8' starts below 1");
  expect_bad_input("tune --op gemm --shape M=1..8,N=768" + rest, "K");  // a representative shape the op refuses
  // A point the template cannot run is refused before the points before it are measured.
  expect_bad_input("tune --op conv2d --shape N=1,C=8,H=7,W=7,K=8,R=3,S=3,stride=1,pad=1,groups=1..8 --target cpu" +
                       rest, "groups");
  EXPECT_FALSE(fs::exists(db()));  // refused before anything was measured
}

}  // namespace
