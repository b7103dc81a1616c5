// The optune command end to end: real processes, real compiles, a real SQLite file.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "optune/db/database.hpp"
#include "../support/command_test.hpp"

namespace {

namespace fs = std::filesystem;

using optune::test_support::CommandRun;
using optune::test_support::slurp;

class CliTest : public optune::test_support::CommandTest {};

constexpr const char* kTinyTune =
    "tune --op gemm --shape 48,40,36 --target cpu --tuner random --trials 4 --batch-size 2 "
    "--repeat 2 --min-repeat-ms 1 --remeasure 1 --quiet --seed 5";

TEST_F(CliTest, TuneOnTinyBudgetRecordsEveryTrialAndReportsTheBest) {
  CommandRun run = optune(std::string(kTinyTune) + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("best"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("GFLOP/s"), std::string::npos);
  EXPECT_NE(run.out.find("speed-up"), std::string::npos);
  EXPECT_NE(run.out.find("gemm.f32.M48.N40.K36"), std::string::npos);

  CommandRun history = optune("query --history --format json --db " + db());
  ASSERT_EQ(history.code, 0) << history.err;
  auto records = nlohmann::json::parse(history.out);
  std::map<std::string, std::size_t> by_tuner;
  for (const auto& r : records) ++by_tuner[r["tuner"].get<std::string>()];
  EXPECT_EQ(by_tuner["default"], 1u);
  EXPECT_EQ(by_tuner["random"], 4u);
  // The best and the default, then (in further waves) any config whose one record beat them; then the
  // final comparison of the default, the best and the runner-up.
  EXPECT_GE(by_tuner["remeasure"], 2u);
  EXPECT_GE(by_tuner["final"], 2u);
  EXPECT_EQ(records.size(), 5u + by_tuner["remeasure"] + by_tuner["final"]);
  for (const auto& r : records) {
    EXPECT_EQ(r["workload"], "gemm.f32.M48.N40.K36");
    EXPECT_EQ(r["target"], "cpu");
    EXPECT_TRUE(r["config"].is_object());
    // Every config passed its check; one cut short by the bail-out (slower than twice the best so
    // far, as a two-thread config of this tiny GEMM is beside a busy core) is a slow record.
    EXPECT_TRUE(r["error_kind"] == "ok" || r["error_kind"] == "slow") << r.dump();
    EXPECT_GT(r["gflops"].get<double>(), 0);
    EXPECT_GT(r["median_seconds"].get<double>(), 0);
  }

  CommandRun best = optune("query --op gemm --shape 48,40,36 --format json --db " + db());
  ASSERT_EQ(best.code, 0) << best.err;
  auto top = nlohmann::json::parse(best.out);
  ASSERT_EQ(top.size(), 1u);
  // The best is the final comparison's winner, with its latest record (history is oldest first):
  // a config re-measured at the end counts with its re-measurement.
  std::map<std::string, double> latest;
  std::string winner;
  for (const auto& r : records) {
    latest[r["config"].dump()] = r["median_seconds"].get<double>();
    if (r["winner"].get<bool>()) winner = r["config"].dump();
  }
  ASSERT_FALSE(winner.empty()) << history.out;
  EXPECT_EQ(top[0]["config"].dump(), winner);
  EXPECT_DOUBLE_EQ(top[0]["median_seconds"].get<double>(), latest[winner]);

  CommandRun csv = optune("query --format csv --db " + db());
  EXPECT_EQ(csv.code, 0);
  EXPECT_EQ(csv.out.rfind("workload,template,target", 0), 0u) << csv.out;
  CommandRun table = optune("query --db " + db());
  EXPECT_NE(table.out.find("gemm.f32.M48.N40.K36"), std::string::npos);
}

TEST_F(CliTest, SecondRunContinuesWithoutRemeasuringTheSameConfigs) {
  ASSERT_EQ(optune(std::string(kTinyTune) + " --db " + db()).code, 0);
  ASSERT_EQ(optune(std::string(kTinyTune) + " --db " + db()).code, 0);
  auto database = optune::db::Database::open(db(), optune::db::Database::Mode::kReadOnly);
  std::set<std::string> configs;
  for (const auto& r : database.records({}))
    if (r.tuner == "random") EXPECT_TRUE(configs.insert(r.config_text()).second);
  EXPECT_EQ(configs.size(), 8u);
}

TEST_F(CliTest, BadShapesAreRejectedWithOneLine) {
  expect_bad_input("tune --op gemm --shape 0,512,512 --db " + db(), "M");
  expect_bad_input("tune --op gemm --shape 512,-4,512 --db " + db(), "N");
  expect_bad_input("tune --op gemm --shape 99999999,512,512 --db " + db(), "M");
  expect_bad_input("tune --op gemm --shape 512,512 --db " + db(), "K");
  expect_bad_input("tune --op gemm --shape abc --db " + db(), "shape");
  expect_bad_input("tune --op gemm --db " + db(), "--shape");
  EXPECT_FALSE(fs::exists(db())) << "a rejected command must not create a database";
}

TEST_F(CliTest, UnknownOpTargetTunerAndFlagsAreRejected) {
  expect_bad_input("tune --op matmul --shape 8,8,8 --db " + db(), "matmul");
  expect_bad_input("tune --op gemm --shape 8,8,8 --target gpu --db " + db(), "gpu");
  expect_bad_input("tune --op gemm --shape 8,8,8 --tuner annealing --trials 1 --db " + db(), "annealing");
  expect_bad_input("tune --op gemm --shape 8,8,8 --trials 0 --db " + db(), "trials");
  expect_bad_input("tune --op gemm --shape 8,8,8 --frobnicate", "frobnicate");
  expect_bad_input("query --format xml --db " + db(), "xml");
  expect_bad_input("frobnicate", "frobnicate");
}

TEST_F(CliTest, FileThatIsNotADatabaseIsRejectedAndLeftAlone) {
  fs::path notes = dir_ / "notes.txt";
  std::ofstream(notes) << "my precious notes\n";
  expect_bad_input("tune --op gemm --shape 8,8,8 --trials 1 --db " + notes.string(), "notes.txt");
  expect_bad_input("query --db " + notes.string(), "notes.txt");
  EXPECT_EQ(slurp(notes), "my precious notes\n");
}

TEST_F(CliTest, UnwritableDatabasePathIsRejected) {
  expect_bad_input("tune --op gemm --shape 8,8,8 --trials 1 --db /nonexistent-dir/sub/x.db", "/nonexistent-dir");
  expect_bad_input("query --db " + (dir_ / "missing.db").string(), "missing.db");
}

TEST_F(CliTest, FailedCommandLeavesExistingDatabaseIntact) {
  ASSERT_EQ(optune(std::string(kTinyTune) + " --db " + db()).code, 0);
  std::size_t before = optune::db::Database::open(db()).count();
  expect_bad_input("tune --op gemm --shape 0,0,0 --db " + db(), "shape");
  expect_bad_input("tune --op gemm --shape 8,8,8 --target opencl:99:99 --db " + db(), "opencl");
  auto database = optune::db::Database::open(db());
  EXPECT_EQ(database.count(), before);
}

TEST_F(CliTest, SpaceShowsKnobsSizeAndDefault) {
  CommandRun run = optune("space --op gemm --shape 512,512,512 --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  auto space = nlohmann::json::parse(run.out);
  EXPECT_EQ(space["workload"], "gemm.f32.M512.N512.K512");
  EXPECT_GE(space["size"].get<double>(), 1e5);
  EXPECT_GT(space["knobs"].size(), 4u);
  EXPECT_TRUE(space["default_config"].is_object());
  CommandRun table = optune("space --op gemm --shape 512,512,512");
  EXPECT_NE(table.out.find("default"), std::string::npos);
}

TEST_F(CliTest, DevicesListsThisCpu) {
  CommandRun run = optune("devices --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  auto devices = nlohmann::json::parse(run.out);
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices[0]["target"], "cpu");
  EXPECT_EQ(devices[0]["id"].get<std::string>().size(), 16u);
}

TEST_F(CliTest, Avx2CapTunesAnotherDeviceWithoutAvx512Candidates) {
  CommandRun native = optune("devices --format json");
  CommandRun capped = optune("devices --format json", "OPTUNE_MAX_CPU_ISA=avx2");
  ASSERT_EQ(capped.code, 0) << capped.err;
  const auto capped_cpu = nlohmann::json::parse(capped.out)[0];
  const auto native_cpu = nlohmann::json::parse(native.out)[0];
  const std::string capped_id = capped_cpu["id"];
  for (const auto& flag : capped_cpu["fingerprint"]["isa"])
    EXPECT_FALSE(flag.get<std::string>().starts_with("avx512")) << capped.out;
  if (native_cpu["fingerprint"]["isa"].dump().find("avx512f") != std::string::npos)
    EXPECT_NE(native_cpu["id"], capped_id);

  CommandRun run = optune(std::string(kTinyTune) + " --db " + db(), "OPTUNE_MAX_CPU_ISA=avx2");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  auto records = nlohmann::json::parse(optune("query --history --format json --db " + db()).out);
  ASSERT_GE(records.size(), 5u);
  for (const auto& r : records) {
    EXPECT_EQ(r["device"], capped_id) << r.dump();
    // Checked against the reference, so it ran (a slow record was cut short after its check).
    EXPECT_TRUE(r["error_kind"] == "ok" || r["error_kind"] == "slow") << r.dump();
    EXPECT_NE(r["config"]["lanes"], "16") << r.dump();
  }

  CommandRun bad = optune("devices", "OPTUNE_MAX_CPU_ISA=avx9");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "optune: error: OPTUNE_MAX_CPU_ISA: unknown ISA 'avx9' (supported: avx2)\n");
}

TEST_F(CliTest, HelpAndVersionExitZero) {
  EXPECT_EQ(optune("--help").code, 0);
  CommandRun help = optune("tune --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--trials"), std::string::npos);
  EXPECT_EQ(optune("--version").code, 0);
}

}  // namespace

namespace {

TEST_F(CliTest, ExportThenImportMovesEveryRecordOnce) {
  ASSERT_EQ(optune(std::string(kTinyTune) + " --db " + db()).code, 0);
  std::string lines = (dir_ / "records.jsonl").string();
  CommandRun exported = optune("export --db " + db() + " --out " + lines);
  ASSERT_EQ(exported.code, 0) << exported.err;
  std::string copy = (dir_ / "copy.db").string();
  CommandRun imported = optune("import " + lines + " --db " + copy);
  ASSERT_EQ(imported.code, 0) << imported.err;
  const std::size_t count = optune::db::Database::open(db()).count();
  EXPECT_NE(imported.out.find("imported " + std::to_string(count) + " new records"), std::string::npos)
      << imported.out;
  CommandRun again = optune("import " + lines + " --db " + copy);
  EXPECT_NE(again.out.find("imported 0 new records"), std::string::npos) << again.out;
  EXPECT_EQ(optune::db::Database::open(copy).count(), optune::db::Database::open(db()).count());
}

// A config timed once, luckily fast, would stay the database's best (it ranks configs by their
// latest record) unless the closing re-measurement takes it in, even when it was not a finalist.
TEST_F(CliTest, ClosingRemeasurementTakesInEveryConfigWhoseOneRecordWouldBeTheBest) {
  const std::string tune = "tune --op gemm --shape 48,40,36 --target cpu --tuner random --batch-size 2 "
                           "--repeat 2 --min-repeat-ms 1 --quiet --db " + db();
  ASSERT_EQ(optune(tune + " --trials 4 --remeasure 0 --seed 5").code, 0);
  std::vector<optune::db::TuningRecord> lucky;
  {
    auto database = optune::db::Database::open(db());
    for (auto record : database.records({})) {
      if (record.tuner != "random" || lucky.size() == 2) continue;
      record.costs = {1e-9, 1e-9};
      record.median_seconds = 1e-9;
      record.timestamp += 1;
      lucky.push_back(record);
    }
    ASSERT_EQ(lucky.size(), 2u);
    database.insert(lucky);
  }
  // --remeasure 1: the first wave takes one of them (and the default), a second wave the other.
  CommandRun run = optune(tune + " --trials 1 --remeasure 1 --seed 6");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  auto database = optune::db::Database::open(db(), optune::db::Database::Mode::kReadOnly);
  for (const auto& record : lucky) {
    bool remeasured = false;
    for (const auto& later : database.records({}))
      remeasured |= later.tuner == "remeasure" && later.config == record.config && later.timestamp > record.timestamp;
    EXPECT_TRUE(remeasured) << record.config_text();
  }
  auto best = database.best({lucky[0].workload_key, lucky[0].template_name, lucky[0].target, lucky[0].device_id});
  ASSERT_TRUE(best);
  EXPECT_GT(best->median_seconds, 1e-7);
  EXPECT_TRUE(best->is_remeasurement()) << best->tuner;
}

TEST_F(CliTest, ImportOfMalformedFileIsRejectedAndKeepsTheDatabase) {
  ASSERT_EQ(optune(std::string(kTinyTune) + " --db " + db()).code, 0);
  std::size_t before = optune::db::Database::open(db()).count();
  fs::path bad = dir_ / "bad.jsonl";
  std::ofstream(bad) << "{\"not\": \"a record\"}\n";
  expect_bad_input("import " + bad.string() + " --db " + db(), "line 1");
  expect_bad_input("import " + (dir_ / "missing.jsonl").string() + " --db " + db(), "missing.jsonl");
  EXPECT_EQ(optune::db::Database::open(db()).count(), before);
}

}  // namespace

namespace {

TEST_F(CliTest, XgbTunerTunesEndToEndAndTransfersToAnotherShape) {
  std::string common = " --tuner xgb --batch-size 4 --repeat 2 --min-repeat-ms 1 --remeasure 1 --quiet --db " + db();
  CommandRun first = optune("tune --op gemm --shape 40,48,32 --trials 8" + common);
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("tuner xgb"), std::string::npos) << first.out;
  // default + 8 trials + the closing re-measurement of the first shape (one wave or more, as the
  // timings fall): every one of its records
  const std::size_t first_records = optune::db::Database::open(db()).count();
  EXPECT_GE(first_records, 11u);
  CommandRun second = optune("tune --op gemm --shape 24,48,32 --trials 4" + common);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find("started from " + std::to_string(first_records) + " records of other shapes"),
            std::string::npos)
      << second.out;
  CommandRun isolated = optune("tune --op gemm --shape 24,40,32 --trials 4 --no-transfer --objective reg:squarederror" + common);
  ASSERT_EQ(isolated.code, 0) << isolated.err;
  EXPECT_EQ(isolated.out.find("records of other shapes"), std::string::npos) << isolated.out;
}

}  // namespace

namespace {

TEST_F(CliTest, SuiteTunesEveryTaskAndEstimatesTheNetworkLatency) {
  fs::path suite = dir_ / "tiny.toml";
  std::ofstream(suite) << "name = \"tiny\"\n"
                          "[[workload]]\nname = \"proj\"\nop = \"gemm\"\nshape = \"16,32,24\"\ncount = 3\n"
                          "[[workload]]\nname = \"head\"\nop = \"gemm\"\nshape = \"M=8,N=40,K=16\"\n";
  CommandRun run = optune("tune --suite " + suite.string() + " --trials-per-task 3 --batch-size 3 --repeat 2 "
                          "--min-repeat-ms 1 --remeasure 1 --quiet --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("proj"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("head"), std::string::npos);
  EXPECT_NE(run.out.find("network latency"), std::string::npos);
  auto database = optune::db::Database::open(db(), optune::db::Database::Mode::kReadOnly);
  int tuned = 0;
  for (const auto& r : database.records({})) tuned += r.tuner == "xgb";
  EXPECT_EQ(tuned, 6);  // 3 trials for each of the 2 tasks
}

// `--layout nchw8c`: the suite's convolutions are tuned on the kept layout (their keys say so,
// their candidates read and write it and pass the check); the stem pinned to NCHW keeps it.
TEST_F(CliTest, SuiteTunesOnAKeptLayout) {
  fs::path suite = dir_ / "blocked.toml";
  std::ofstream(suite) << "name = \"blocked\"\n"
                          "[[workload]]\nname = \"stem\"\nop = \"conv2d\"\nshape = \"C=3,H=12,W=12,K=8,R=3,S=3,pad=1\"\n"
                          "layout = \"nchw\"\n"
                          "[[workload]]\nname = \"dw\"\nop = \"depthwise_conv2d\"\nshape = \"C=12,H=10,W=9,R=3,S=3,stride=2,pad=1\"\n"
                          "[[workload]]\nname = \"pw\"\nop = \"conv2d\"\nshape = \"C=12,H=5,W=5,K=20,R=1,S=1\"\n";
  expect_bad_input("tune --suite " + suite.string() + " --layout nchw7c --db " + db(), "unknown layout 'nchw7c'");
  expect_bad_input("tune --op conv2d --shape C=8,H=8,W=8,K=8,R=3,S=3 --layout nchw8c --db " + db(), "--layout");
  CommandRun run = optune("tune --suite " + suite.string() + " --layout nchw8c --trials-per-task 2 --batch-size 2 "
                          "--repeat 1 --min-repeat-ms 1 --remeasure 0 --quiet --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  auto database = optune::db::Database::open(db(), optune::db::Database::Mode::kReadOnly);
  std::map<std::string, int> ok;
  for (const auto& r : database.records({})) {
    EXPECT_TRUE(r.ok()) << r.workload_key << " " << r.error_kind << ": " << r.error_message;
    ok[r.workload_key] += r.ok();
  }
  EXPECT_GE(ok["conv2d.nchw.f32.N1.C3.H12.W12.K8.R3.S3.st1.pad1.dil1.g1"], 1);
  EXPECT_GE(ok["depthwise_conv2d.nchw8c.f32.N1.C12.H10.W9.R3.S3.st2.pad1.dil1"], 1);
  EXPECT_GE(ok["conv2d.nchw8c.f32.N1.C12.H5.W5.K20.R1.S1.st1.pad0.dil1.g1"], 1);
}

// Channels last is for the templates that take it (GPU implicit GEMMs): no CPU template applies to
// an NHWC conv2d, which is bad input naming the workload, before any database is made.
TEST_F(CliTest, NoCpuTemplateTakesAChannelsLastConv2d) {
  expect_bad_input("tune --op conv2d --shape N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=nhwc --dtype bf16 "
                   "--target cpu --db " + db(),
                   "no template for op conv2d on backend cpu applies to "
                   "conv2d.nhwc.bf16.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1");
  EXPECT_FALSE(fs::exists(db()));
}

TEST_F(CliTest, MalformedSuiteIsRejectedWithFileAndLine) {
  fs::path suite = dir_ / "broken.toml";
  std::ofstream(suite) << "name = \"broken\"\n[[workload]]\nop = \"gemm\"\nshape = \"16,0,24\"\n";
  expect_bad_input("tune --suite " + suite.string() + " --db " + db(), "broken.toml:2: shape");
  expect_bad_input("tune --suite " + suite.string() + " --shape 4,4,4 --db " + db(), "not both");
  expect_bad_input("tune --suite " + (dir_ / "none.toml").string() + " --db " + db(), "none.toml");
  expect_bad_input("tune --suite " + suite.string() + " --budget 5 hours --db " + db(), "hours");
  EXPECT_FALSE(fs::exists(db()));
}

}  // namespace

namespace {

// The conv templates end to end: candidates of conv2d.cpu are built, checked against the
// reference, timed and recorded like GEMM's.
TEST_F(CliTest, TunesAConv2dLayerEndToEnd) {
  CommandRun run = optune(
      "tune --op conv2d --shape N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1 --trials 4 --batch-size 2 "
      "--repeat 2 --min-repeat-ms 1 --remeasure 1 --quiet --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("conv2d.nchw.f32.N1.C16.H14.W14.K32.R3.S3.st1.pad1.dil1.g1"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("speed-up"), std::string::npos) << run.out;
  CommandRun history = optune("query --history --format json --db " + db());
  ASSERT_EQ(history.code, 0) << history.err;
  auto records = nlohmann::json::parse(history.out);
  std::map<std::string, std::size_t> by_tuner;
  for (const auto& r : records) ++by_tuner[r["tuner"].get<std::string>()];
  EXPECT_EQ(by_tuner["default"], 1u);
  // Four trials; the best and the default, then (in further waves) any config whose one record beat them.
  EXPECT_GE(by_tuner["remeasure"], 2u);
  EXPECT_GE(by_tuner["final"], 2u);
  EXPECT_EQ(records.size(), 1u + 4u + by_tuner["remeasure"] + by_tuner["final"]);
  for (const auto& r : records) {
    EXPECT_EQ(r["template"], "conv2d.cpu") << r.dump();
    EXPECT_TRUE(r["error_kind"] == "ok" || r["error_kind"] == "slow") << r.dump();
    EXPECT_GT(r["gflops"].get<double>(), 0);
  }
}

// A 1x1 layer has two templates: conv2d_gemm.cpu (its default) and conv2d.cpu (the direct
// kernel, by --template). query ranks their records together and apply-best writes the fastest
// as the layer's row; a template that does not apply is refused with the ones that do.
TEST_F(CliTest, TunesEachTemplateOfALayerAndRanksThemTogether) {
  const std::string shape = "N=1,C=16,H=8,W=8,K=16,R=1,S=1,stride=1,pad=0";
  const std::string common = " --trials 2 --batch-size 2 --repeat 2 --min-repeat-ms 1 --remeasure 0 --quiet --db " + db();
  ASSERT_EQ(optune("tune --op conv2d --shape " + shape + common).code, 0);
  CommandRun direct = optune("tune --op conv2d --shape " + shape + " --template conv2d.cpu" + common);
  ASSERT_EQ(direct.code, 0) << direct.out << direct.err;
  CommandRun history = optune("query --history --format json --db " + db());
  ASSERT_EQ(history.code, 0) << history.err;
  std::map<std::string, std::size_t> per_template;
  for (const auto& r : nlohmann::json::parse(history.out)) ++per_template[r["template"].get<std::string>()];
  EXPECT_EQ(per_template["conv2d_gemm.cpu"], 3u);  // the default and 2 trials
  EXPECT_EQ(per_template["conv2d.cpu"], 3u);
  CommandRun best = optune("query --top 1 --format json --db " + db());
  ASSERT_EQ(best.code, 0) << best.err;
  auto top = nlohmann::json::parse(best.out);
  ASSERT_EQ(top.size(), 1u) << best.out;  // one ranking across both templates
  const fs::path header = dir_ / "tuned.hpp";
  ASSERT_EQ(optune("apply-best --db " + db() + " --target cpu --out " + header.string()).code, 0);
  const std::string text = optune::test_support::slurp(header);
  const std::string key = top[0]["workload"].get<std::string>();
  EXPECT_NE(text.find("// " + key), std::string::npos) << text;
  EXPECT_EQ(text.find(".algorithm = optune::kernels::cpu::ConvAlgorithm::kGemm") != std::string::npos,
            top[0]["template"] == "conv2d_gemm.cpu") << text;

  CommandRun refused = optune("tune --op conv2d --shape N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1 "
                              "--template conv2d_gemm.cpu" + common);
  EXPECT_EQ(refused.code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("templates that do: conv2d.cpu"), std::string::npos) << refused.err;
}

// Before the split, conv2d.cpu carried both algorithms: its records of GEMM configs are read as
// conv2d_gemm.cpu's, by import's checks and by apply-best.
TEST_F(CliTest, OldConv2dRecordsOfGemmConfigsAreReadAsTheGemmTemplates) {
  const std::string shape = "N=1,C=16,H=8,W=8,K=16,R=1,S=1,stride=1,pad=0";
  ASSERT_EQ(optune("tune --op conv2d --shape " + shape + " --trials 2 --batch-size 2 --repeat 2 --min-repeat-ms 1 "
                   "--remeasure 0 --quiet --db " + db()).code, 0);
  const fs::path lines = dir_ / "records.jsonl", old_lines = dir_ / "old_records.jsonl";
  ASSERT_EQ(optune("export --db " + db() + " --out " + lines.string()).code, 0);
  {
    std::ifstream in(lines);
    std::ofstream out(old_lines);
    for (std::string line; std::getline(in, line);) {
      auto record = nlohmann::json::parse(line);
      ASSERT_EQ(record["template_name"], "conv2d_gemm.cpu");
      record["template_name"] = "conv2d.cpu";  // as the single template wrote it
      out << record.dump() << "\n";
    }
  }
  const std::string old_db = (dir_ / "old.db").string();
  CommandRun imported = optune("import " + old_lines.string() + " --db " + old_db);
  ASSERT_EQ(imported.code, 0) << imported.out << imported.err;
  const fs::path header = dir_ / "tuned.hpp";
  CommandRun applied = optune("apply-best --db " + old_db + " --target cpu --out " + header.string());
  ASSERT_EQ(applied.code, 0) << applied.out << applied.err;
  const std::string text = optune::test_support::slurp(header);
  EXPECT_NE(text.find("ConvAlgorithm::kGemm"), std::string::npos) << text;
  EXPECT_NE(text.find("(conv2d_gemm.cpu)"), std::string::npos) << text;
  CommandRun query = optune("query --top 1 --format json --db " + old_db);
  ASSERT_EQ(query.code, 0) << query.err;
  EXPECT_EQ(nlohmann::json::parse(query.out)[0]["template"], "conv2d.cpu");
}

TEST_F(CliTest, SuiteWithConvAndDepthwiseLayersTunesBoth) {
  fs::path suite = dir_ / "tiny_net.toml";
  std::ofstream(suite) << "name = \"tiny_net\"\n"
                          "[[workload]]\nname = \"dw\"\nop = \"depthwise_conv2d\"\n"
                          "shape = \"N=1,C=24,H=15,W=15,R=3,S=3,stride=2,pad=1\"\n"
                          "[[workload]]\nname = \"pw\"\nop = \"conv2d\"\n"
                          "shape = \"N=1,C=24,H=8,W=8,K=40,R=1,S=1,stride=1,pad=0\"\ncount = 2\n";
  CommandRun run = optune("tune --suite " + suite.string() + " --trials-per-task 2 --batch-size 2 --repeat 2 "
                          "--min-repeat-ms 1 --remeasure 1 --quiet --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("dw"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("pw"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("network latency"), std::string::npos) << run.out;
  auto database = optune::db::Database::open(db(), optune::db::Database::Mode::kReadOnly);
  std::map<std::string, int> ok_per_template;
  for (const auto& r : database.records({})) {
    EXPECT_TRUE(r.ok()) << r.workload_key << ": " << r.error_kind;
    ok_per_template[r.template_name] += 1;
  }
  EXPECT_GE(ok_per_template["depthwise_conv2d.cpu"], 3);  // default and 2 trials at least
  EXPECT_GE(ok_per_template["conv2d_gemm.cpu"], 3);  // pw: a 1x1 layer, the GEMM template's
}

}  // namespace
