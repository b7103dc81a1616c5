// optune dispatch (issue 38) end to end on this machine's CPU: a GEMM range's dispatch measured,
// stored and validated on a held-out shape, and shown by the report; pick answers each shape of the range with the leaf
// that holds it; and a consumer compiled against apply-best's header runs, for 20 shapes, the row
// pick names (the tuned shape's row, the leaf's box, the nearest shape's row or the default) and
// computes the right product. Bad shapes and options are refused with one line and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "command_test.hpp"
#include "optune/db/database.hpp"

namespace {

namespace fs = std::filesystem;
using optune::test_support::CommandRun;

constexpr const char* kQuick = " --repeat 3 --min-repeat-ms 1 --timeout 20 --quiet";
constexpr const char* kRange = "M=1..64,N=32,K=32";

class DispatchCliTest : public optune::test_support::CommandTest {
 protected:
  nlohmann::json pick(std::int64_t m, std::int64_t n = 32) {
    CommandRun run = optune("pick --op gemm --shape " + std::to_string(m) + "," + std::to_string(n) +
                            ",32 --format json --db " + db());
    EXPECT_EQ(run.code, 0) << run.err;
    return nlohmann::json::parse(run.out);
  }

  // The default config of 32,32,32 measured into db(), and a rule of `template_name` over
  // M=low_m..64 (N=K=32) with one leaf running that config, stored beside it: a rule without a
  // dispatch run. Returns the measured record.
  optune::db::TuningRecord plant_rule(const std::string& template_name, std::int64_t low_m, nlohmann::json& rule) {
    CommandRun run = optune("measure --op gemm --shape 32,32,32 --default --rounds 1 --repeat 3 --min-repeat-ms 1 --db " + db());
    EXPECT_EQ(run.code, 0) << run.err;
    const auto records = optune::db::Database::open(db(), optune::db::Database::Mode::kReadOnly).records({});
    if (records.empty()) throw std::runtime_error("measure recorded nothing");
    const auto low = "gemm.f32.M" + std::to_string(low_m) + ".N32.K32";
    rule = {{"configs", {{{"config", records.front().config}, {"from", "gemm.f32.M32.N32.K32"}}}},
            {"leaves", {{{"name", "all"}, {"low", {{"M", low_m}, {"N", 32}, {"K", 32}}},
                         {"high", {{"M", 64}, {"N", 32}, {"K", 32}}}, {"config", 0}}}}};
    optune::db::Database::open(db()).insert_dispatch(
        {0, template_name, "cpu", records.front().device_id, low, "gemm.f32.M64.N32.K32", rule, 1.0, "0.1.0"});
    return records.front();
  }
};

// For each shape given as arguments (M N K ...): the index of the header's row that runs it, that
// row's M and M upper bound, and the largest error of optune::gemm against a plain triple loop.
constexpr const char* kConsumer = R"cpp(
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "tuned.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i + 2 < argc; i += 3) {
    const long M = std::atol(argv[i]), N = std::atol(argv[i + 1]), K = std::atol(argv[i + 2]);
    std::vector<float> A(M * K), B(K * N), C(M * N, 0.f);
    for (long j = 0; j < M * K; ++j) A[j] = static_cast<float>((j * 7) % 13) / 13.f - 0.5f;
    for (long j = 0; j < K * N; ++j) B[j] = static_cast<float>((j * 5) % 11) / 11.f - 0.5f;
    optune::gemm(M, N, K, A.data(), K, B.data(), N, C.data(), N);
    double error = 0;
    for (long m = 0; m < M; ++m)
      for (long n = 0; n < N; ++n) {
        double sum = 0;
        for (long k = 0; k < K; ++k) sum += double(A[m * K + k]) * double(B[k * N + n]);
        error = std::fmax(error, std::fabs(sum - C[m * N + n]));
      }
    const int row = optune::kernels::cpu::tuned_gemm_row<optune::tuned::kGemm>(M, N, K);
    const long low = row < 0 ? 0 : optune::tuned::kGemm[row].m;
    const long upper = row < 0 ? 0 : optune::tuned::kGemm[row].m_upper;
    std::printf("%ld %d %ld %ld %g\n", M, row, low, upper, error);
  }
}
)cpp";

TEST_F(DispatchCliTest, RangeIsMeasuredStoredPickedAndCompiledIn) {
  CommandRun run = optune(std::string("dispatch --op gemm --shape ") + kRange +
                          " --samples 6 --trials 2 --finalists 1 --held-out-count 1 --refine 0 --rounds 1 --format json --db " + db() + kQuick);
  ASSERT_EQ(run.code, 0) << run.err;
  const auto rule = nlohmann::json::parse(run.out);
  EXPECT_EQ(rule["template"], "gemm.cpu");
  EXPECT_EQ(rule["low"], "gemm.f32.M1.N32.K32");
  EXPECT_EQ(rule["high"], "gemm.f32.M64.N32.K32");
  EXPECT_EQ(rule["cover"], "greedy");
  const auto& shapes = rule["shapes"];
  ASSERT_GE(shapes.size(), 4u);
  EXPECT_EQ(shapes.front(), "gemm.f32.M1.N32.K32");
  EXPECT_EQ(shapes.back(), "gemm.f32.M64.N32.K32");
  // The matrix: every finalist on every shape; each shape's best is 1 by definition of a row.
  ASSERT_EQ(rule["matrix"].size(), rule["finalists"].size());
  for (const auto& row : rule["matrix"]) EXPECT_EQ(row.size(), shapes.size());
  ASSERT_GE(rule["configs"].size(), 1u);
  EXPECT_LE(rule["configs"].size(), 8u);
  // The leaves tile the range: M from 1 to 64, each next one starting after the last.
  const auto& leaves = rule["leaves"];
  ASSERT_GE(leaves.size(), 1u);
  std::int64_t next = 1;
  for (const auto& leaf : leaves) {
    EXPECT_EQ(leaf["low"]["M"], next);
    EXPECT_EQ(leaf["low"]["N"], 32);
    EXPECT_EQ(leaf["high"]["K"], 32);
    EXPECT_LT(leaf["config"].get<std::size_t>(), rule["configs"].size());
    next = leaf["high"]["M"].get<std::int64_t>() + 1;
  }
  EXPECT_EQ(next, 65);
  // One held-out shape of the range, not sampled, measured against its own tuned best.
  ASSERT_EQ(rule["held_out"].size(), 1u);
  const auto& held_out = rule["held_out"][0];
  EXPECT_EQ(std::find(shapes.begin(), shapes.end(), held_out["workload"]), shapes.end());
  EXPECT_TRUE(held_out["own_best"].is_number()) << held_out.dump();
  EXPECT_TRUE(held_out["rule"].is_number()) << held_out.dump();
  // The matrix's measurements are records of their own.
  const auto records = nlohmann::json::parse(optune("query --op gemm --history --format json --db " + db()).out);
  const auto dispatch_records =
      std::count_if(records.begin(), records.end(), [](const auto& r) { return r["tuner"] == "dispatch"; });
  EXPECT_GE(dispatch_records, static_cast<long>(shapes.size()));

  // The report shows the rule: its leaves and its matrix.
  ASSERT_EQ(optune("report --db " + db() + " --out " + (dir_ / "report.html").string()).code, 0);
  const std::string report = optune::test_support::slurp(dir_ / "report.html");
  EXPECT_NE(report.find("Dispatch " + rule["id"].dump() + ": " + kRange), std::string::npos);
  for (const auto& leaf : leaves) EXPECT_NE(report.find("<td>" + leaf["name"].get<std::string>() + "</td>"), std::string::npos);
  EXPECT_NE(report.find("<th>" + shapes.back().get<std::string>() + "</th>"), std::string::npos);

  // 20 shapes: pick's answer and the row the compiled header runs agree.
  const std::vector<std::int64_t> ms = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 28, 33, 40, 50, 60, 64, 80, 100};
  std::string workloads, arguments;
  std::map<std::int64_t, nlohmann::json> picks;
  for (auto m : ms) {
    picks[m] = pick(m);
    workloads += " --workload gemm.f32.M" + std::to_string(m) + ".N32.K32";
    arguments += " " + std::to_string(m) + " 32 32";
  }
  std::size_t dispatched = 0;
  for (const auto& [m, answer] : picks) {
    const std::string source = answer["source"];
    if (m <= 64) EXPECT_TRUE(source == "tuned" || source == "dispatch") << m << " " << answer.dump();
    if (source != "dispatch") continue;
    ++dispatched;
    const auto& leaf = leaves[answer["dispatch"]["leaf_index"].get<std::size_t>()];
    EXPECT_LE(leaf["low"]["M"].get<std::int64_t>(), m);
    EXPECT_GE(leaf["high"]["M"].get<std::int64_t>(), m);
    EXPECT_EQ(answer["dispatch"]["leaf"], leaf["name"]);
    EXPECT_EQ(answer["dispatch"]["rule_id"], rule["id"]);
  }
  EXPECT_GE(dispatched, 10u);  // at most 7 of the 18 in the range were tuned
  run = optune("apply-best --db " + db() + " --out " + (dir_ / "tuned.hpp").string() + workloads);
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string leaf_count =
      std::to_string(leaves.size()) + (leaves.size() == 1 ? " dispatch leaf" : " dispatch leaves");
  EXPECT_NE(run.out.find(leaf_count), std::string::npos) << run.out;
  std::ofstream(dir_ / "consumer.cpp") << kConsumer;
  const std::string compile = "c++ -std=c++20 -O1 -march=native -fopenmp -I " + dir_.string() + " -I " +
                              OPTUNE_SOURCE_DIR + "/backends/cpu/include " + (dir_ / "consumer.cpp").string() +
                              " -o " + (dir_ / "consumer").string() + " 2> " + (dir_ / "compile.log").string();
  ASSERT_EQ(std::system(compile.c_str()), 0) << optune::test_support::slurp(dir_ / "compile.log");
  std::system(((dir_ / "consumer").string() + arguments + " > " + (dir_ / "rows.txt").string()).c_str());
  std::istringstream rows(optune::test_support::slurp(dir_ / "rows.txt"));
  std::size_t checked = 0;
  std::int64_t m = 0, low = 0, upper = 0;
  int row = 0;
  double error = 0;
  while (rows >> m >> row >> low >> upper >> error) {
    ++checked;
    EXPECT_LT(error, 1e-4) << "M=" << m;
    const auto& answer = picks.at(m);
    const std::string source = answer["source"];
    if (source == "default") {
      EXPECT_EQ(row, -1) << "M=" << m;
    } else if (source == "dispatch") {
      const auto& leaf = leaves[answer["dispatch"]["leaf_index"].get<std::size_t>()];
      EXPECT_EQ(low, leaf["low"]["M"]) << "M=" << m;
      EXPECT_EQ(upper, leaf["high"]["M"]) << "M=" << m;
    } else {  // tuned or nearest: the shape's own row
      EXPECT_GE(row, 0) << "M=" << m << " " << source;
      EXPECT_EQ(low, m);
      EXPECT_EQ(upper, 0);
    }
  }
  EXPECT_EQ(checked, ms.size());
}

// The refinement, made certain rather than left to timing: the sampled shapes' only records run a
// slow config (tiny tiles, four lanes, one thread), so the one-config rule runs it everywhere;
// held-out 200 holds a config 8x faster (one thread too) as its own best and so misses, held-out
// 64 holds the slow config itself and so cannot. The miss is promoted to a sampled shape (a column of
// the matrix), the rule fitted again, and only 64 is checked against it.
TEST_F(DispatchCliTest, HeldOutShapesTheRuleMissesAreSampledAndTheRuleFittedAgain) {
  // The slow config on an M x 128 x 128 shape (its row blocks, 8 rows each, must cover M).
  auto slow = [](int m) {
    return R"(--config '{"lanes":"4","loop_order":"jc_pc_ic","mr":1,"nr":4,"pack_a":false,"pack_b":false,)"
           R"("parallel_loop":"jc","threads":1,"tile_kc":[8,16],"tile_mc":[)" + std::to_string(m / 8) +
           R"(,8],"tile_nc":[8,16],"unroll_k":"1"}')";
  };
  auto plant = [&](int m, const std::string& config) {
    return optune("measure --op gemm --shape " + std::to_string(m) + ",128,128 " + config +
                  " --rounds 1 --repeat 3 --min-repeat-ms 1 --db " + db()).code;
  };
  for (int m : {16, 256, 64}) ASSERT_EQ(plant(m, slow(m)), 0) << m;
  // One thread on both sides: a two-thread kernel on a machine busy with anything else can run
  // 300x slower than alone (OpenMP's barriers), a one-thread one shares the core as the other does.
  ASSERT_EQ(plant(200, R"(--config '{"lanes":"8","loop_order":"jc_pc_ic","mr":6,"nr":16,"pack_a":false,)"
                       R"("pack_b":true,"parallel_loop":"jc","threads":1,"tile_kc":[1,128],"tile_mc":[5,48],)"
                       R"("tile_nc":[1,128],"unroll_k":"4"}')"),
            0);
  CommandRun run = optune(std::string("dispatch --op gemm --shape 16,128,128 --shape 256,128,128 --trials 0 ") +
                          "--finalists 1 --configs 1 --held-out 200,128,128 --held-out 64,128,128 --within 0 " +
                          "--refine 1 --rounds 1 --format json --db " + db() + kQuick);
  ASSERT_EQ(run.code, 0) << run.err;
  const auto rule = nlohmann::json::parse(run.out);
  const auto& shapes = rule["shapes"];
  auto sampled = [&shapes](const nlohmann::json& key) { return std::find(shapes.begin(), shapes.end(), key) != shapes.end(); };
  for (const auto& row : rule["matrix"]) EXPECT_EQ(row.size(), shapes.size());
  ASSERT_EQ(rule["refinements"].size(), 1u) << rule.dump(1);
  const auto& refinement = rule["refinements"][0];
  ASSERT_EQ(refinement["held_out"].size(), 2u);
  for (const auto& check : refinement["held_out"]) {
    ASSERT_TRUE(check["own_best"].is_number() && check["rule"].is_number()) << check.dump();
    const bool missed = check["rule"].get<double>() > check["own_best"].get<double>();
    EXPECT_EQ(missed, check["workload"] == "gemm.f32.M200.N128.K128") << check.dump();
  }
  EXPECT_EQ(refinement["promoted"], nlohmann::json::array({"gemm.f32.M200.N128.K128"}));
  EXPECT_TRUE(sampled("gemm.f32.M200.N128.K128")) << "the promoted shape is a column of the matrix";
  EXPECT_EQ(shapes.size(), 3u);
  // The final check: the held-out shape that was not promoted, against the rule fitted again.
  ASSERT_EQ(rule["held_out"].size(), 1u);
  EXPECT_EQ(rule["held_out"][0]["workload"], "gemm.f32.M64.N128.K128");
  EXPECT_FALSE(sampled("gemm.f32.M64.N128.K128"));
}

// A stored rule whose template this build lacks (stored by another build, or of a retired template)
// holds no shape: pick and apply-best pass it over and answer with the nearest tuned shape.
TEST_F(DispatchCliTest, RuleOfATemplateThisBuildLacksIsPassedOver) {
  nlohmann::json rule;
  plant_rule("gemm.retired", 1, rule);
  EXPECT_EQ(pick(5)["source"], "nearest");
  CommandRun run = optune("apply-best --db " + db() + " --out " + (dir_ / "tuned.hpp").string() +
               " --workload gemm.f32.M5.N32.K32");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(optune::test_support::slurp(dir_ / "tuned.hpp").find("gemm.f32.M5.N32.K32: never tuned; the config tuned for"),
            std::string::npos);
}

// A rule moves with `export` and `import` as the records do: the importing database's pick answers
// with its leaf. A rule line whose leaf lies outside its range is refused (exit 2), nothing kept.
TEST_F(DispatchCliTest, RulesMoveWithExportAndImport) {
  nlohmann::json rule;
  const auto measured = plant_rule("gemm.cpu", 16, rule);
  const std::string lines = (dir_ / "export.jsonl").string(), other = (dir_ / "other.db").string();
  CommandRun run = optune("export --db " + db() + " --out " + lines);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("and 1 dispatch rule\n"), std::string::npos) << run.err;
  run = optune("import " + lines + " --db " + other);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("and 1 new dispatch rule into"), std::string::npos) << run.out;
  run = optune("pick --op gemm --shape 48,32,32 --format json --db " + other);
  ASSERT_EQ(run.code, 0) << run.err;
  const auto answer = nlohmann::json::parse(run.out);
  EXPECT_EQ(answer["source"], "dispatch") << answer.dump();
  EXPECT_EQ(answer["config"], measured.config);

  rule["leaves"][0]["high"]["M"] = 128;  // beyond the range's M=64
  const nlohmann::json forged = {{"dispatch_rule",
                                  {{"template", "gemm.cpu"}, {"target", "cpu"}, {"device_id", measured.device_id},
                                   {"low", "gemm.f32.M16.N32.K32"}, {"high", "gemm.f32.M64.N32.K32"}, {"rule", rule},
                                   {"timestamp", 2.0}, {"optune_version", "0.1.0"}}}};
  std::ofstream(dir_ / "forged.jsonl") << forged.dump() << "\n";
  expect_bad_input("import " + (dir_ / "forged.jsonl").string() + " --db " + other, "line 1: dispatch rule: leaf");
  EXPECT_EQ(optune::db::Database::open(other, optune::db::Database::Mode::kReadOnly).dispatches("", "").size(), 1u);
}

TEST_F(DispatchCliTest, BadShapesAndOptionsAreRefusedBeforeAnythingIsMeasured) {
  expect_bad_input("dispatch --op gemm --shape 64,32,32 --db " + db(), "one shape is no range");
  expect_bad_input("dispatch --op gemm --shape M=64..8,N=32,K=32 --db " + db(), "is empty");
  expect_bad_input("dispatch --op gemm --shape M=1..8,N=32,K=32 --shape 4,32,32 --db " + db(), "not both");
  expect_bad_input("dispatch --op gemm --shape 8,32,32 --shape 16,32,32,dtype=bf16 --db " + db(), "not of one kind");
  expect_bad_input("dispatch --op gemm --shape M=1..8,N=32,K=32 --held-out 9,32,32 --db " + db(),
                   "is not a shape of the range");
  expect_bad_input("dispatch --op gemm --shape M=1..8,N=32,K=32 --configs 0 --db " + db(), "--configs");
  expect_bad_input("dispatch --op gemm --shape M=1..8,N=32,K=x --db " + db(), "K");
  EXPECT_FALSE(fs::exists(db()));  // nothing was measured, so no database was made
}

}  // namespace
