// Numbers to trust on a busy machine (issue 37), end to end through the optune command: records
// taken while this test loads every core are marked noisy, the progress line and the summary say
// so. Real worker processes, real busy processes, real SQLite files; no timing is asserted beyond
// generous hang bounds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "optune/db/database.hpp"
#include "../support/busy_processes.hpp"
#include "../support/job_command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::test_support::BusyProcesses;
using optune::test_support::CommandRun;

class TrustCliTest : public optune::test_support::JobCommandTest {
 protected:
  // A kernel file whose default (WORK = 4, its knobs' first values) does four passes where the
  // other config does one: the tuned config is about 4x faster, whatever the machine.
  fs::path write_work_kernel() {
    std::ofstream(dir_ / "work.cpp")
        << "#include <cstdint>\n"
           "extern \"C\" void work(const float* x, float* y, std::int32_t n) {\n"
           "  for (int pass = 0; pass < WORK; ++pass) {\n"
           "    for (std::int32_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n"
           "    asm volatile(\"\" ::: \"memory\");  // each pass is done, not folded into one\n"
           "  }\n"
           "}\n"
           "extern \"C\" void work_reference(const float* x, float* y, std::int32_t n) {\n"
           "  for (std::int32_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n"
           "}\n";
    std::ofstream(dir_ / "work.toml")
        << "name = \"work\"\nbackend = \"cpu\"\nsource = \"work.cpp\"\nentry = \"work\"\nbuild_options = [\"-O2\"]\n"
           "flops = \"2 * N\"\nargs = [\n"
           "  { name = \"x\", kind = \"buffer\", dtype = \"f32\", count = \"N\" },\n"
           "  { name = \"y\", kind = \"buffer\", dtype = \"f32\", count = \"N\", output = true },\n"
           "  { name = \"n\", kind = \"scalar\", dtype = \"i32\", value = \"N\" },\n]\n"
           "[extents]\nN = 65536\n[knobs]\nWORK = [4, 1]\n"
           "[check]\nreference = \"work_reference\"\nrtol = 1e-6\natol = 1e-6\n";
    return dir_ / "work.toml";
  }

  std::string tune_work(const std::string& extra) {
    return "tune --kernel " + write_work_kernel().string() + " --target cpu --tuner grid --trials 1 --repeat 3 "
           "--min-repeat-ms 20 --db " + db() + " " + extra;
  }
};

TEST_F(TrustCliTest, ABusyMachineMarksItsRecordsNoisyAndTheRunSaysSo) {
  CommandRun run;
  {
    BusyProcesses busy;  // a busy loop on every core, for the whole run
    run = optune(tune_work("--remeasure 0"));
  }
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  std::size_t noisy = 0, measured = 0;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({})) {
    if (!record.ok()) continue;
    ++measured;
    ASSERT_TRUE(record.load.has_value()) << "the load beside the worker is read on Linux";
    EXPECT_GT(*record.load, optune::db::kBusyLoad) << "other processes took the cores";
    noisy += record.is_noisy();
  }
  EXPECT_EQ(measured, 2u);
  EXPECT_EQ(noisy, measured);
  EXPECT_NE(run.err.find("noisy 1"), std::string::npos) << "the progress line says so\n" << run.err;
  EXPECT_NE(run.err.find("machine busy"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("noise      1 of 1 trials measured while the machine was busy"), std::string::npos) << run.out;

  CommandRun query = optune("query --db " + db());
  EXPECT_NE(query.out.find(" ok noisy "), std::string::npos) << query.out;
  CommandRun json = optune("query --format json --db " + db());
  const auto records = nlohmann::json::parse(json.out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_TRUE(records[0]["noisy"].get<bool>()) << records[0].dump();
  EXPECT_GT(records[0]["load"].get<double>(), optune::db::kBusyLoad);
  EXPECT_TRUE(records[0]["spread"].is_number());
}

}  // namespace
