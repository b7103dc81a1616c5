// A user's own kernel (a kernel file) end to end through the optune command: tuned on the CPU and
// on PoCL, every fault of a candidate a record (a wrong answer, a hang, a crash, a write past an
// argument's end, an element left unwritten) while tuning goes on, records that survive a SIGKILL
// and a run that resumes from them, kernel workloads in jobs, and bad kernel files and options
// answered with exit code 2 and one line.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "optune/db/database.hpp"
#include "../support/cpu_kernel_file.hpp"
#include "../support/job_command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::test_support::CommandRun;
using optune::test_support::slurp;

const fs::path kExamples = fs::path(OPTUNE_SOURCE_DIR) / "configs" / "kernels";
const fs::path kTestKernels = fs::path(OPTUNE_SOURCE_DIR) / "tests" / "data" / "kernels";
// Bail-out off: these tests check each config's outcome, and on a busy machine one of several
// identical microsecond kernels may time over twice the best and be cut as `slow` (CI saw it).
constexpr const char* kQuick = "--repeat 2 --min-repeat-ms 1 --bail-out off --quiet";

class KernelCliTest : public optune::test_support::JobCommandTest {
 protected:
  // Every record of the database: config text -> error kind (the latest record of a config).
  std::map<std::string, std::string> outcomes() {
    std::map<std::string, std::string> by_config;
    auto database = Database::open(db(), Database::Mode::kReadOnly);
    for (const auto& record : database.records({})) by_config[record.config_text()] = record.error_kind;
    return by_config;
  }
  std::size_t record_count() {
    if (!fs::exists(db())) return 0;
    try {
      return Database::open(db(), Database::Mode::kReadOnly).records({}).size();
    } catch (const std::exception&) {
      return 0;  // not created yet
    }
  }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  // The kernel file of a C++ kernel `name` in `name`.cpp (written by the test) computing y of x over
  // `n` floats, with the knob lines `knobs`, checked against `name`_reference in the same source.
  fs::path write_cpu_kernel(const std::string& name, int n, const std::string& knobs) {
    return write(name + ".toml", optune::test_support::cpu_kernel_file(name, n, knobs));
  }
};

TEST_F(KernelCliTest, CpuKernelFaultsAreRecordsAndTuningGoesOn) {
  CommandRun run = optune("tune --kernel " + (kTestKernels / "faulty_cpu.toml").string() +
                          " --target cpu --tuner grid --trials 6 --timeout 3 --remeasure 0 " + kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("workload   kernel.faulty_cpu.N4096"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("config     {\"MODE\":0}"), std::string::npos) << run.out;
  const auto by_config = outcomes();
  EXPECT_EQ(by_config.at("{\"MODE\":0}"), "ok");
  EXPECT_EQ(by_config.at("{\"MODE\":1}"), "wrong_answer");  // off by 1e-3 against atol 1e-6
  EXPECT_EQ(by_config.at("{\"MODE\":2}"), "timeout");       // never returns
  EXPECT_EQ(by_config.at("{\"MODE\":3}"), "crash");         // a null write
  EXPECT_EQ(by_config.at("{\"MODE\":4}"), "wrong_answer");  // one element past y's end
  EXPECT_EQ(by_config.at("{\"MODE\":5}"), "wrong_answer");  // y[0] left as the poison
  auto database = Database::open(db(), Database::Mode::kReadOnly);
  for (const auto& record : database.records({})) {
    EXPECT_TRUE(record.template_name.starts_with("kernel.faulty_cpu.cpu#")) << record.template_name;
    EXPECT_EQ(record.workload_key, "kernel.faulty_cpu.N4096");
    if (record.config_text() == "{\"MODE\":4}") EXPECT_NE(record.error_message.find("past the end of argument 'y'"), std::string::npos);
    if (record.config_text() == "{\"MODE\":5}") EXPECT_NE(record.error_message.find("y[0] = nan"), std::string::npos);
    if (record.ok()) EXPECT_NEAR(record.gflops, 2 * 4096 / record.median_seconds / 1e9, 1e-6 * record.gflops);
  }
}

TEST_F(KernelCliTest, IntegerOutputsWithoutAReferenceMustBeWrittenByEveryRun) {
  CommandRun run = optune("tune --kernel " + (kTestKernels / "histogram_cpu.toml").string() +
                          " --target cpu --tuner grid --trials 2 --remeasure 0 " + kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("GB/s"), std::string::npos) << "a file with bytes and no flops counts GB/s\n" << run.out;
  const auto by_config = outcomes();
  EXPECT_EQ(by_config.at("{\"MODE\":0}"), "ok");
  EXPECT_EQ(by_config.at("{\"MODE\":1}"), "wrong_answer");  // bins[255] keeps each run's poison
}

TEST_F(KernelCliTest, SaxpyTunesOnTheCpuAgainstItsReference) {
  CommandRun run = optune("tune --kernel " + (kExamples / "saxpy_cpu.toml").string() +
                          " --shape N=100003 --target cpu --tuner random --trials 5 " + kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("kernel.saxpy.N100003"), std::string::npos) << run.out;
  for (const auto& [config, kind] : outcomes()) EXPECT_EQ(kind, "ok") << config;
  // query and space read kernel workloads like built-in ones.
  CommandRun query = optune("query --format json --db " + db());
  ASSERT_EQ(query.code, 0) << query.err;
  EXPECT_NE(query.out.find("kernel.saxpy.cpu"), std::string::npos) << query.out;
  CommandRun space = optune("space --kernel " + (kExamples / "saxpy_cpu.toml").string() + " --target cpu --format json");
  ASSERT_EQ(space.code, 0) << space.err;
  const auto described = nlohmann::json::parse(space.out);
  EXPECT_TRUE(described["template"].get<std::string>().starts_with("kernel.saxpy.cpu#")) << described["template"];
  EXPECT_EQ(described["size"], 16);
  EXPECT_TRUE(described["valid_share_counted"]) << "a space of 16 configs is counted, not sampled";
  EXPECT_EQ(described["valid_share_estimate"], 1.0);
  EXPECT_EQ(described["default_config"], nlohmann::json({{"BLOCK", 256}, {"UNROLL", 1}}));
}

TEST_F(KernelCliTest, StencilTunesOnTheCpu) {
  CommandRun run = optune("tune --kernel " + (kExamples / "stencil_cpu.toml").string() +
                          " --shape N=300,M=200 --target cpu --tuner random --trials 4 " + kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({}))
    EXPECT_EQ(record.error_kind, "ok") << record.config_text() << ": " << record.error_message;
}

TEST_F(KernelCliTest, KernelRecordsSurviveASigkillAndTheRunResumes) {
  const std::string tune = "tune --kernel " + (kExamples / "saxpy_cpu.toml").string() +
                           " --shape N=65536 --target cpu --tuner random --batch-size 1 --trials 16 " + kQuick +
                           " --db " + db();
  pid_t pid = start_optune(tune, "killed");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  while (record_count() < 4) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << slurp(dir_ / "killed.out");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_job(pid), 128 + SIGKILL);
  const auto before = outcomes();
  ASSERT_GE(before.size(), 3u);

  CommandRun again = optune(tune);
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  const auto after = outcomes();
  for (const auto& [config, kind] : before) EXPECT_EQ(after.count(config), 1u) << config << " was lost";
  EXPECT_EQ(after.size(), 16u) << "the space has 16 configs: the resumed run measured the rest, none twice";
}

TEST_F(KernelCliTest, JobsListKernelFiles) {
  fs::path job = write("kernels.toml", "name = \"kernels\"\nbudget = 4\ntuner = \"random\"\ndatabase = \"" + db() +
                                           "\"\n[[workload]]\nkernel = \"" + (kExamples / "saxpy_cpu.toml").string() +
                                           "\"\nshape = \"N=4096\"\n[measure]\nrepeat = 2\nmin_repeat_ms = 1\n");
  CommandRun run = optune("job run " + job.string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  auto database = Database::open(db(), Database::Mode::kReadOnly);
  std::set<std::string> keys;
  for (const auto& record : database.records({})) keys.insert(record.workload_key);
  EXPECT_EQ(keys, std::set<std::string>{"kernel.saxpy.N4096"});
}

TEST_F(KernelCliTest, KernelRecordsMergeReportAndGateARegression) {
  const std::string saxpy = (kExamples / "saxpy_cpu.toml").string();
  const std::string a = (dir_ / "a.db").string(), b = (dir_ / "b.db").string();
  ASSERT_EQ(optune("tune --kernel " + saxpy + " --shape N=4096 --target cpu --trials 3 " + kQuick + " --db " + a).code, 0);
  ASSERT_EQ(optune("tune --kernel " + saxpy + " --shape N=8192 --target cpu --trials 3 " + kQuick + " --db " + b).code, 0);
  // merge checks every record it takes: a kernel file's, without the file, for all but its space.
  CommandRun merge = optune("merge " + a + " " + b);
  ASSERT_EQ(merge.code, 0) << merge.out << merge.err;
  std::set<std::string> keys;
  for (const auto& record : Database::open(a, Database::Mode::kReadOnly).records({})) keys.insert(record.workload_key);
  EXPECT_EQ(keys, (std::set<std::string>{"kernel.saxpy.N4096", "kernel.saxpy.N8192"}));
  CommandRun report = optune("report --db " + a + " --out " + (dir_ / "report.html").string());
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(slurp(dir_ / "report.html").find("kernel.saxpy.N8192"), std::string::npos);
  // regress measures a suite's kernel workloads, default against the tuned best.
  fs::path suite = write("suite.toml", "name = \"kernels\"\n[[workload]]\nkernel = \"" + saxpy +
                                           "\"\nshape = \"N=4096\"\n");
  CommandRun regress = optune("regress --suite " + suite.string() + " --target cpu --tolerance 10 --db " + a);
  EXPECT_EQ(regress.code, 0) << regress.out << regress.err;
  EXPECT_NE(regress.out.find("kernel.saxpy.N4096"), std::string::npos) << regress.out;
}

TEST_F(KernelCliTest, BadKernelFilesAndOptionsExitTwoWithOneLine) {
  const std::string saxpy = (kExamples / "saxpy_cpu.toml").string();
  expect_bad_input("tune --kernel " + (dir_ / "missing.toml").string() + " --db " + db(), "missing.toml");
  std::string text = slurp(kExamples / "saxpy_cpu.toml");
  text.replace(text.find("UNROLL = [1, 2, 4, 8]"), 21, "UNROLL = []");
  fs::path no_values = write("bad.toml", text);
  fs::copy_file(kExamples / "saxpy_cpu.cpp", dir_ / "saxpy_cpu.cpp");
  expect_bad_input("tune --kernel " + no_values.string() + " --db " + db(), "knobs.UNROLL");
  expect_bad_input("tune --kernel " + saxpy + " --shape N=0 --db " + db(), "N=0");
  expect_bad_input("tune --kernel " + saxpy + " --shape Q=5 --db " + db(), "Q");
#ifdef OPTUNE_HAS_OPENCL
  expect_bad_input("tune --kernel " + saxpy + " --target opencl --db " + db(), "runs on cpu");
#else
  expect_bad_input("tune --kernel " + saxpy + " --target opencl --db " + db(), "unknown target 'opencl'");
#endif
  expect_bad_input("tune --kernel " + saxpy + " --suite x.toml --db " + db(), "--kernel or --suite");
  expect_bad_input("space --kernel " + saxpy + " --shape N=-3", "N=-3");
  fs::path job = write("bad_job.toml", "name = \"j\"\nbudget = 2\n[[workload]]\nkernel = \"nowhere.toml\"\n");
  expect_bad_input("job run " + job.string(), "nowhere.toml");
  EXPECT_FALSE(fs::exists(db())) << "a rejected command must not create a database";
}

TEST_F(KernelCliTest, KernelKeywordsAndOpWithKernelAreBadInput) {
  const std::string saxpy = (kExamples / "saxpy_cpu.toml").string();
  fs::copy_file(kExamples / "saxpy_cpu.cpp", dir_ / "saxpy_cpu.cpp");
  std::string text = slurp(kExamples / "saxpy_cpu.toml");
  text.replace(text.find("UNROLL = [1, 2, 4, 8]"), 21, "for = [1, 2, 4, 8]");
  expect_bad_input("space --kernel " + write("keyword.toml", text).string(), "'for' is a keyword");
  text.replace(text.find("for = [1, 2, 4, 8]"), 18, "unsigned = [1, 2, 4, 8]");
  expect_bad_input("space --kernel " + write("type_name.toml", text).string(), "'unsigned' is a keyword");
  expect_bad_input("tune --kernel " + saxpy + " --op conv2d --db " + db(), "--op");
  EXPECT_FALSE(fs::exists(db()));
}

// A kernel file's default is only its knobs' first values: it may crash where other configs work.
// A later batch that fails as the default did is then the configs' fault, not the environment's,
// since a config that worked still works.
TEST_F(KernelCliTest, ADefaultThatCrashesDoesNotStopARunThatFoundWorkingConfigs) {
  std::string text = slurp(kTestKernels / "faulty_cpu.toml");
  const std::string source = "source = \"faulty_cpu.cpp\"", modes = "MODE = [0, 1, 2, 3, 4, 5]";
  text.replace(text.find(source), source.size(), "source = \"" + (kTestKernels / "faulty_cpu.cpp").string() + "\"");
  text.replace(text.find(modes), modes.size(), "MODE = [3, 0]\nSPARE = [1, 2, 3]");
  const fs::path kernel = write("crashing_default.toml", text);
  CommandRun run = optune("tune --kernel " + kernel.string() + " --target cpu --tuner grid --batch-size 1 --trials 5 " +
                          "--remeasure 0 " + kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("default    failed: crash"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("the default failed"), std::string::npos) << run.out;
  std::size_t crashes = 0, successes = 0;
  for (const auto& [config, kind] : outcomes()) {
    const bool crashing = config.find("\"MODE\":3") != std::string::npos;
    EXPECT_EQ(kind, crashing ? "crash" : "ok") << config;
    (crashing ? crashes : successes) += 1;
  }
  EXPECT_EQ(crashes, 3u);
  EXPECT_EQ(successes, 3u);
}

// A kernel that prints (as one does while debugging) or reads stdin is measured like any other:
// the worker's messages travel apart from the candidate's stdio.
TEST_F(KernelCliTest, KernelsThatPrintOrReadStdinAreMeasured) {
  write("chatty.cpp", R"(#include <cstdint>
#include <cstdio>
extern "C" void chatty(const float* x, float* y, std::int32_t n) {
  if (MODE == 1) std::printf("{\"not\": \"a reply\"}\ndebug: n=%d\n", n);
  if (MODE == 2) std::fflush(stdout), std::puts("unbuffered"), std::fflush(stdout);
  if (MODE == 3) {
    char line[256];
    if (std::fgets(line, sizeof line, stdin)) y[0] = -1;  // a request read away would show here
  }
  for (std::int32_t i = MODE == 3 && y[0] == -1 ? 1 : 0; i < n; ++i) y[i] = 2 * x[i];
}
extern "C" void chatty_reference(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i];
}
)");
  const fs::path kernel = write_cpu_kernel("chatty", 1024, "MODE = [0, 1, 2, 3]");
  CommandRun run = optune("tune --kernel " + kernel.string() + " --target cpu --tuner grid --trials 6 --remeasure 0 " +
                          kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("note       the tuner found no other config to measure"), std::string::npos) << run.out;
  const auto by_config = outcomes();
  ASSERT_EQ(by_config.size(), 4u);
  for (const auto& [config, kind] : by_config) EXPECT_EQ(kind, "ok") << config;
  EXPECT_NE(run.err.find("debug: n=1024"), std::string::npos) << "a kernel's output goes to stderr\n" << run.err;
}

// A transport_error record (an RPC server died under the candidate) says nothing of the config:
// a later run measures the config again instead of skipping it as a known failure.
TEST_F(KernelCliTest, ConfigsWhoseOnlyRecordIsATransportErrorAreMeasuredAgain) {
  write("linked.cpp", optune::test_support::doubling_source("linked"));
  const fs::path kernel = write_cpu_kernel("linked", 256, "V = [0, 1, 2]");
  const std::string tune = "tune --kernel " + kernel.string() + " --target cpu --tuner grid --trials 2 --remeasure 0 " + kQuick;
  const std::string first_db = (dir_ / "first.db").string();
  ASSERT_EQ(optune(tune + " --db " + first_db).code, 0);
  // The same records as an RPC run whose server died under V=1 and V=2 would have written.
  std::vector<optune::db::TuningRecord> records = Database::open(first_db).records({});
  ASSERT_EQ(records.size(), 3u);
  for (auto& record : records) {
    if (record.is_default) continue;
    record.error_kind = "transport_error";
    record.error_message = "device 127.0.0.1:9190: connection reset by peer";
    record.costs.clear();
    record.median_seconds = record.gflops = 0;
  }
  Database::open(db()).insert(records);

  CommandRun run = optune(tune + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(run.out.find("found no other config to measure"), std::string::npos) << run.out;
  const auto by_config = outcomes();  // the latest record of each config
  EXPECT_EQ(by_config.at("{\"V\":1}"), "ok");
  EXPECT_EQ(by_config.at("{\"V\":2}"), "ok");
}

TEST_F(KernelCliTest, AReferenceThatLeavesAnOutputUnwrittenIsNamedAsTheCause) {
  write("lazy.cpp", R"(#include <cstdint>
extern "C" void lazy(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i] + V;
}
extern "C" void lazy_reference(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 1; i < n; ++i) y[i] = 2 * x[i];
}
)");
  const fs::path kernel = write_cpu_kernel("lazy", 256, "V = [0, 1]");
  CommandRun run = optune("tune --kernel " + kernel.string() + " --target cpu --tuner grid --trials 1 --remeasure 0 " +
                          kQuick + " --db " + db());
  EXPECT_NE(run.err.find("y[0] = "), std::string::npos) << run.out << run.err;
  EXPECT_NE(run.err.find("the reference left it unwritten"), std::string::npos) << run.out << run.err;
}

// A reference that crashes or hangs fails every candidate alike: it runs on its own before any
// candidate, and the file is named as the cause (exit 2), not the candidates nor the environment.
// Records already in the database stay; none of the broken file's are added.
TEST_F(KernelCliTest, AReferenceThatCrashesOrHangsIsTheFilesFaultNotTheCandidates) {
  const std::string saxpy = (kExamples / "saxpy_cpu.toml").string();
  ASSERT_EQ(optune("tune --kernel " + saxpy + " --shape N=4096 --target cpu --trials 2 --remeasure 0 " + kQuick +
                   " --db " + db()).code, 0);
  const std::size_t before = record_count();
  ASSERT_GT(before, 0u);
  write("broken.cpp", R"(#include <cstdint>
extern "C" void broken(const float* x, float* y, std::int32_t n) {
  for (std::int32_t i = 0; i < n; ++i) y[i] = 2 * x[i] + V;
}
extern "C" void broken_reference(const float* x, float* y, std::int32_t n) {
  if (FAULT == 0) *static_cast<volatile float*>(nullptr) = x[0];
  for (volatile std::int32_t i = 0; i < n; i = FAULT == 1 ? 0 : i + 1) y[i] = 2 * x[i];
}
)");
  const fs::path crashing = write_cpu_kernel("broken", 256, "V = [0, 1]");
  std::string text = slurp(crashing);
  text.replace(text.find("flops"), 0, "build_options = [\"-DFAULT=0\"]\n");
  write("broken.toml", text);
  expect_bad_input("tune --kernel " + crashing.string() + " --target cpu --trials 4 " + kQuick + " --db " + db(),
                   "kernel.broken.N256: the check's reference 'broken_reference' crashed the worker: signal 11");
  text.replace(text.find("-DFAULT=0"), 9, "-DFAULT=1");
  write("broken.toml", text);
  expect_bad_input("tune --kernel " + crashing.string() + " --target cpu --trials 4 --timeout 0.3 " + kQuick + " --db " +
                       db(),
                   "the check's reference 'broken_reference' gave no result within 3 s; no config can be checked");
  EXPECT_EQ(record_count(), before);
}

// A reference that writes one element past its output, or that does not build (a name the source
// does not declare), is the file's fault too (exit 2, nothing recorded): no candidate can be
// checked. Its outputs were taken as the expected values; every candidate was a build_error (exit 1).
TEST_F(KernelCliTest, AReferenceThatWritesPastItsOutputOrDoesNotBuildIsTheFilesFault) {
  write("over.cpp", optune::test_support::doubling_source("over", "y[n] = 0;"));
  const fs::path kernel = write_cpu_kernel("over", 256, "V = [0, 1]");
  const std::string tune = "tune --kernel " + kernel.string() + " --target cpu --trials 2 " + kQuick + " --db " + db();
  expect_bad_input(tune, "kernel.over.N256: the check's reference 'over_reference' wrote past the end of argument 'y'");
  EXPECT_EQ(record_count(), 0u);
  std::string text = slurp(kernel);
  text.replace(text.find("\"over_reference\""), 16, "\"missing_reference\"");
  write("over.toml", text);
  expect_bad_input(tune, "kernel.over.N256: the check's reference does not build (the candidate builds without it): ");
  CommandRun run = optune(tune);
  EXPECT_NE(run.err.find("missing_reference"), std::string::npos) << run.err;  // the compiler's first error
  EXPECT_EQ(record_count(), 0u);
}

TEST_F(KernelCliTest, ARangeOfAKernelsExtentTunesItsRepresentativeSizes) {
  const std::string saxpy = (kExamples / "saxpy_cpu.toml").string();
  CommandRun run = optune("tune --kernel " + saxpy + " --shape N=1000..8000 --target cpu --tuner random --trials 6 " +
                          "--remeasure 0 " + kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("representative shapes (N=1000; "), std::string::npos) << run.out;
  std::set<std::string> workloads;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({})) workloads.insert(record.workload_key);
  EXPECT_TRUE(workloads.count("kernel.saxpy.N1000")) << run.out;
  EXPECT_TRUE(workloads.count("kernel.saxpy.N8000")) << run.out;
  EXPECT_GE(workloads.size(), 3u) << run.out;
  EXPECT_NE(run.out.find("apply-best --kernel"), std::string::npos) << run.out;
  expect_bad_input("tune --kernel " + saxpy + " --shape N=8000..1000 --db " + dir_.string() + "/other.db", "N=8000..1000");
  expect_bad_input("tune --kernel " + saxpy + " --shape Q=1..8 --db " + dir_.string() + "/other.db", "Q");
}

#ifdef OPTUNE_HAS_OPENCL
TEST_F(KernelCliTest, OpenCLKernelFaultsAreRecordsAndTuningGoesOn) {
  CommandRun run = optune("tune --kernel " + (kTestKernels / "faulty.toml").string() +
                          " --target opencl --tuner grid --trials 4 --timeout 20 --remeasure 0 " + kQuick + " --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const auto by_config = outcomes();
  EXPECT_EQ(by_config.at("{\"MODE\":0,\"WG\":64}"), "ok");
  EXPECT_EQ(by_config.at("{\"MODE\":1,\"WG\":64}"), "wrong_answer");
  EXPECT_EQ(by_config.at("{\"MODE\":2,\"WG\":64}"), "timeout");
  EXPECT_EQ(by_config.at("{\"MODE\":3,\"WG\":64}"), "wrong_answer");  // past y's end: the guard
}

// Each OpenCL example of configs/kernels tunes on PoCL at a small problem, every candidate
// passing its reference (axpy_f16 needs cl_khr_fp16, which PoCL here lacks; its indexing is
// checked in tests/kernels).
TEST_F(KernelCliTest, OpenCLExamplesTuneOnPocl) {
  const std::pair<const char*, const char*> examples[] = {
      {"transpose.toml", "N=256,M=128"}, {"conv2d.toml", "W=96,H=64"}, {"reduction.toml", "N=65536,PARTS=64"}};
  for (const auto& [file, shape] : examples) {
    const std::string database = (dir_ / (std::string(file) + ".db")).string();
    CommandRun run = optune("tune --kernel " + (kExamples / file).string() + " --shape " + shape +
                            " --target opencl --tuner random --trials 4 --timeout 60 " + kQuick + " --db " + database);
    ASSERT_EQ(run.code, 0) << file << "\n" << run.out << run.err;
    for (const auto& record : Database::open(database, Database::Mode::kReadOnly).records({}))
      EXPECT_EQ(record.error_kind, "ok") << file << " " << record.config_text() << ": " << record.error_message;
  }
}
#endif

}  // namespace
