// What people look at first, checked as they see it: the HTML page of `optune report` read back as
// a DOM (report_dom.py, Python's html.parser: every record a point at its trial, the best-so-far
// line, the default's baseline, failures by kind equal to the database's, tick labels with units,
// --op and --since), and the table of `optune query` (columns aligned whatever the key's length,
// devices by name, the ids kept in the JSON). The records are inserted through the database's API
// as tuning runs write them, with figures consistent with their workloads: no measuring, so fast.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/command_test.hpp"
#include "optune/db/database.hpp"
#include "optune/kernels/workload.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using optune::db::Database;
using optune::db::TuningRecord;
using optune::test_support::CommandRun;
using optune::test_support::slurp;

constexpr const char* kGemm = "gemm.f32.M48.N40.K36";
constexpr const char* kConv = "conv2d.nchw.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1";
constexpr const char* kKernel = "kernel.saxpy.N4096";
constexpr const char* kDeviceId = "feedc0de00000001";
constexpr const char* kDeviceName = "Test CPU";

struct Task {
  std::string workload;
  std::string template_name;
  std::string device_id = kDeviceId;
  std::string device_name = kDeviceName;
};

const Task kGemmTask{kGemm, "gemm.cpu"};
const Task kConvTask{kConv, "conv2d.cpu"};
const Task kKernelTask{kKernel, "kernel.saxpy.cpu"};

// One record of a run: config `config` measured at `seconds` (ok or slow), or failed with
// `error_kind`. Its figures are its workload's (RecordCheck passes over any other).
TuningRecord record(const Task& task, int config, const std::string& error_kind, double seconds,
                    const std::string& tuner, const std::string& run, double timestamp) {
  TuningRecord r;
  r.workload_key = task.workload;
  r.template_name = task.template_name;
  r.target = "cpu";
  r.device_id = task.device_id;
  r.device_fingerprint = {{"kind", "cpu"}, {"name", task.device_name}};
  r.config = {{"tile", config}};
  r.error_kind = error_kind;
  r.tuner = tuner;
  r.run_id = run;
  r.timestamp = timestamp;
  r.is_default = tuner == "default";
  if (error_kind == "ok" || error_kind == "slow") {
    r.costs = {seconds, seconds, seconds};
    r.median_seconds = seconds;
    const double flops = optune::kernels::parse_workload_key(task.workload).flops();
    r.gflops = flops > 0 ? flops / seconds / 1e9 : 0.004 / seconds;  // a kernel file's own unit
  } else {
    r.error_message = error_kind + " of config " + std::to_string(config);
  }
  return r;
}

class ReportCliTest : public optune::test_support::CommandTest {
 protected:
  const double now_ = static_cast<double>(std::time(nullptr));
  const double days_ago_ = now_ - 10 * 86400;

  // The GEMM task: a run ten days ago (default, seven trials of which four not ok, the closing
  // re-measurement and a final comparison whose winner is trial 3's config, re-measured slower
  // than its trial), and a run an hour ago (default, two trials); a conv2d and a kernel file's
  // task ten days ago.
  void plant() {
    std::vector<TuningRecord> records;
    double at = days_ago_;
    auto add = [&](const Task& task, int config, const std::string& kind, double seconds, const std::string& tuner,
                   const std::string& run) {
      records.push_back(record(task, config, kind, seconds, tuner, run, at += 1));
    };
    add(kGemmTask, 0, "ok", 2.0e-3, "default", "old");
    add(kGemmTask, 1, "ok", 1.5e-3, "random", "old");
    add(kGemmTask, 2, "build_error", 0, "random", "old");
    add(kGemmTask, 3, "ok", 1.0e-3, "random", "old");
    add(kGemmTask, 4, "timeout", 0, "random", "old");
    add(kGemmTask, 5, "wrong_answer", 0, "random", "old");
    add(kGemmTask, 6, "slow", 5.0e-3, "random", "old");
    add(kGemmTask, 7, "ok", 1.2e-3, "random", "old");
    add(kGemmTask, 3, "ok", 1.3e-3, "remeasure", "old");
    add(kGemmTask, 0, "ok", 2.1e-3, "final", "old");
    add(kGemmTask, 3, "ok", 1.25e-3, "final", "old");
    records.back().winner = true;
    add(kConvTask, 0, "ok", 4.0e-3, "default", "conv");
    add(kConvTask, 1, "crash", 0, "xgb", "conv");
    add(kConvTask, 2, "ok", 3.0e-3, "xgb", "conv");
    add(kConvTask, 3, "ok", 3.5e-3, "xgb", "conv");
    add(kKernelTask, 0, "ok", 0.8e-3, "default", "saxpy");
    add(kKernelTask, 1, "ok", 0.9e-3, "random", "saxpy");
    add(kKernelTask, 2, "ok", 0.5e-3, "random", "saxpy");
    add(kKernelTask, 3, "ok", 0.6e-3, "random", "saxpy");
    at = now_ - 3600;
    add(kGemmTask, 0, "ok", 2.05e-3, "default", "new");
    add(kGemmTask, 8, "runtime_error", 0, "random", "new");
    add(kGemmTask, 9, "ok", 1.4e-3, "random", "new");
    Database::open(db()).insert(records);
  }

  // The report's page, read as a DOM.
  json report(const std::string& arguments = "") {
    const std::string page = (dir_ / "report.html").string();
    CommandRun run = optune("report --db " + db() + " --out " + page + " " + arguments);
    EXPECT_EQ(run.code, 0) << run.out << run.err;
    const std::string parsed = page + ".json";
    const std::string command =
        "python3 " + std::string(OPTUNE_SOURCE_DIR) + "/tests/integration/report_dom.py " + page + " > " + parsed;
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return json::parse(slurp(parsed));
  }

  // The database's records of a task, by error kind (ok left out).
  std::map<std::string, std::size_t> not_ok_in_database(const std::string& workload, double since = 0) {
    std::map<std::string, std::size_t> kinds;
    optune::db::RecordFilter filter;
    filter.workload_key = workload;
    filter.since = since;
    for (const auto& r : Database::open(db(), Database::Mode::kReadOnly).records(filter))
      if (!r.ok()) ++kinds[r.error_kind];
    return kinds;
  }
  std::size_t records_in_database(const std::string& workload, double since = 0) {
    optune::db::RecordFilter filter;
    filter.workload_key = workload;
    filter.since = since;
    return Database::open(db(), Database::Mode::kReadOnly).records(filter).size();
  }
};

const json& task_of(const json& page, const std::string& workload) {
  for (const auto& task : page["tasks"])
    if (task["heading"].get<std::string>().rfind(workload + " ", 0) == 0) return task;
  ADD_FAILURE() << "no task " << workload << " in " << page.dump(1);
  static const json none = json::object();
  return none;
}

std::vector<std::string> summary_row(const json& page, const std::string& workload) {
  for (const auto& row : page["summary"])
    if (row[0] == workload) return row.get<std::vector<std::string>>();
  ADD_FAILURE() << "no summary row " << workload;
  return std::vector<std::string>(13, "");
}

// The plot's promises, whatever the task: one point per record, the not-ok points and the table
// both as the database counts them, a best-so-far line that never gets worse, tick labels.
void expect_plot_promises(const json& task, std::size_t records, const std::map<std::string, std::size_t>& not_ok) {
  const std::string name = task["heading"];
  EXPECT_EQ(task["points"].size(), records) << name;
  std::map<std::string, std::size_t> crosses;
  std::size_t last_trial = 0;
  for (const auto& point : task["points"]) {
    if (point["kind"] != "ok") ++crosses[point["kind"]];
    EXPECT_GE(point["trial"].get<std::size_t>(), last_trial) << name << ": trials in the order measured";
    last_trial = point["trial"];
  }
  EXPECT_EQ(crosses, not_ok) << name;
  EXPECT_EQ(task["not_ok"].get<decltype(crosses)>(), not_ok) << name;

  // SVG's y grows downwards: more GFLOP/s is a smaller y, a shorter time a larger one.
  const auto& line = task["best_so_far"];
  ASSERT_GE(line.size(), 2u) << name;
  const bool gflops = task["metric"] == "gflops";
  for (std::size_t i = 1; i < line.size(); ++i) {
    EXPECT_GE(line[i][0].get<double>(), line[i - 1][0].get<double>()) << name;
    if (gflops)
      EXPECT_LE(line[i][1].get<double>(), line[i - 1][1].get<double>()) << name << ": got worse at " << i;
    else
      EXPECT_GE(line[i][1].get<double>(), line[i - 1][1].get<double>()) << name << ": got worse at " << i;
  }

  EXPECT_EQ(task["x_title"], "trial") << name;
  EXPECT_NE(task["y_title"].get<std::string>().find(gflops ? "GFLOP/s" : "ms"), std::string::npos) << name;
  ASSERT_GE(task["x_ticks"].size(), 2u) << name;
  ASSERT_GE(task["y_ticks"].size(), 2u) << name;
  EXPECT_EQ(task["x_ticks"][0], "0") << name;
  EXPECT_EQ(task["y_ticks"][0], "0") << name;
  for (const auto* axis : {"x_ticks", "y_ticks"})
    for (std::size_t i = 1; i < task[axis].size(); ++i)
      EXPECT_GT(std::stod(task[axis][i].get<std::string>()), std::stod(task[axis][i - 1].get<std::string>()))
          << name << " " << axis;
}

TEST_F(ReportCliTest, EveryRecordIsAPointWithTheBestSoFarTheDefaultAndFailuresByKind) {
  plant();
  const json page = report();
  EXPECT_EQ(page["tasks"].size(), 3u);
  EXPECT_EQ(page["scripts"], 0) << "self-contained: no script";
  EXPECT_TRUE(page["remote"].empty()) << page["remote"].dump();
  EXPECT_NE(page["style"].get<std::string>().find("td.key,td.config,td.message{text-align:left;overflow-wrap:anywhere"),
            std::string::npos)
      << "configs wrap rather than widen the page: " << page["style"];
  EXPECT_EQ(page["config_cells"], 3) << "one per task";
  EXPECT_NE(page["source"].get<std::string>().find("22 records of 22, in 3 tasks"), std::string::npos)
      << page["source"];

  for (const char* workload : {kGemm, kConv, kKernel})
    expect_plot_promises(task_of(page, workload), records_in_database(workload), not_ok_in_database(workload));

  const json& gemm = task_of(page, kGemm);
  EXPECT_EQ(gemm["metric"], "gflops");
  std::map<std::string, std::size_t> roles;
  for (const auto& point : gemm["points"]) ++roles[point["role"]];
  EXPECT_EQ(roles, (std::map<std::string, std::size_t>{{"default", 2}, {"trial", 9}, {"remeasure", 3}}));
  EXPECT_EQ(gemm["points"][0]["trial"], 0) << "the first default before any trial";
  EXPECT_EQ(gemm["points"][10]["trial"], 7) << "the final comparison after the old run's 7 trials";
  EXPECT_EQ(gemm["points"].back()["trial"], 9);
  EXPECT_EQ(gemm["x_ticks"].back(), "10") << "the axis ends on a tick";
  // The default config's latest figure (the new run's, 2.05 ms) as a labelled baseline.
  ASSERT_EQ(gemm["baselines"].size(), 1u);
  EXPECT_EQ(gemm["baselines"][0]["label"], fmt::format("default {:.4g} GFLOP/s", 138240 / 2.05e-3 / 1e9));
  // The headline best is the final comparison's figure of trial 3's config, not its trial's.
  EXPECT_NE(gemm["best"].get<std::string>().find(fmt::format("{:.4g} GFLOP/s (1.2500 ms)", 138240 / 1.25e-3 / 1e9)),
            std::string::npos)
      << gemm["best"];
  EXPECT_EQ(gemm["headline_rings"], 1) << "the headline's point is ringed";
  ASSERT_TRUE(gemm["note"].is_string()) << "a re-measured best is explained";
  const std::string note = gemm["note"];
  EXPECT_NE(note.find(fmt::format("Its trial 3 measured {:.4g} GFLOP/s", 138240 / 1.0e-3 / 1e9)), std::string::npos)
      << note;
  EXPECT_NE(note.find("from the final comparison at the end of run old"), std::string::npos) << note;

  const auto row = summary_row(page, kGemm);
  EXPECT_EQ(row[3], kDeviceName);
  EXPECT_EQ(row[4], "14") << "records";
  EXPECT_EQ(row[5], "9") << "trials";
  EXPECT_EQ(row[6], "5") << "not ok";
  EXPECT_EQ(row[7], "2.0500") << "the default's latest ms";
  EXPECT_EQ(row[9], "1.2500 *") << "the headline, marked as explained below";
  EXPECT_EQ(row[11], "1.64x") << "the speed-up as tune words it";

  const json& conv = task_of(page, kConv);
  EXPECT_EQ(conv["note"], nullptr) << "a best measured once needs no note";
  EXPECT_EQ(summary_row(page, kConv)[11], fmt::format("{:.2f}x", 4.0 / 3.0));

  // A kernel file's records name no unit for their throughput: its plot is in time.
  const json& kernel = task_of(page, kKernel);
  EXPECT_EQ(kernel["metric"], "ms");
  ASSERT_EQ(kernel["baselines"].size(), 1u);
  EXPECT_EQ(kernel["baselines"][0]["label"], "default 0.8 ms");
  EXPECT_EQ(summary_row(page, kKernel)[8], "-") << "no GFLOP/s for a kernel file";
  EXPECT_TRUE(kernel["not_ok"].empty());
}

TEST_F(ReportCliTest, OpAndSinceChooseTheRecordsAsQueryDoes) {
  plant();
  const json conv = report("--op conv2d");
  ASSERT_EQ(conv["tasks"].size(), 1u);
  EXPECT_EQ(conv["tasks"][0]["heading"].get<std::string>().rfind(kConv, 0), 0u);
  EXPECT_EQ(conv["summary"].size(), 1u);
  EXPECT_NE(conv["source"].get<std::string>().find("4 records of 22 (op conv2d), in 1 task"), std::string::npos)
      << conv["source"];

  // Two days back: the GEMM's run of an hour ago alone, its trials numbered from its default.
  const json recent = report("--since 2d");
  ASSERT_EQ(recent["tasks"].size(), 1u);
  const json& gemm = task_of(recent, kGemm);
  const double since = now_ - 2 * 86400;
  expect_plot_promises(gemm, records_in_database(kGemm, since), not_ok_in_database(kGemm, since));
  EXPECT_EQ(gemm["points"].size(), 3u);
  EXPECT_EQ(gemm["x_ticks"].back(), "2");
  EXPECT_EQ(gemm["not_ok"], json({{"runtime_error", 1}}));

  // The same --since as query's: a date, and a date to come (nothing, and still a page).
  const json all = report("--since 2020-01-01");
  EXPECT_EQ(all["tasks"].size(), 3u);
  const json none = report("--op gemm --since 2999-01-01T00:00");
  EXPECT_TRUE(none["tasks"].empty());
  EXPECT_NE(none["source"].get<std::string>().find("0 records of 22 (op gemm, since 2999-01-01 00:00), in 0 tasks"),
            std::string::npos)
      << none["source"];
}

TEST_F(ReportCliTest, BadOpOrSinceExitsTwoWithOneLine) {
  plant();
  const std::string out = " --out " + (dir_ / "r.html").string() + " --db " + db();
  expect_bad_input("report --since yesterday-ish" + out, "report: --since: ");
  expect_bad_input("report --since 2026-13-45" + out, "report: --since: ");
  expect_bad_input("report --op frobnicate" + out, "unknown op 'frobnicate'");
  EXPECT_FALSE(fs::exists(dir_ / "r.html")) << "nothing written for bad input";
}

// query's table: conv2d's 58-character keys beside a GEMM's, the columns aligned on every line;
// the device by name (two devices of one name told apart by their ids' start), the id in the JSON.
TEST_F(ReportCliTest, QueryTableAlignsLongKeysAndNamesDevices) {
  plant();
  Task capped = kGemmTask;  // the same CPU tuned with AVX2 only: another fingerprint, the same name
  capped.device_id = "beefbeef00000002";
  Task other = kConvTask;
  other.device_id = "0123456789abcdef";
  other.device_name = "Other CPU";
  Database::open(db()).insert({record(capped, 1, "ok", 1.1e-3, "random", "capped", now_ - 60),
                               record(other, 1, "ok", 2.5e-3, "random", "other", now_ - 60)});

  CommandRun table = optune("query --db " + db());
  ASSERT_EQ(table.code, 0) << table.err;
  CommandRun listed = optune("query --format json --db " + db());
  ASSERT_EQ(listed.code, 0) << listed.err;
  const json records = json::parse(listed.out);
  ASSERT_EQ(records.size(), 5u);

  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = table.out.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(table.out.substr(start, end - start));
  ASSERT_GE(lines.size(), records.size() + 1) << table.out;
  const std::string& header = lines[0];
  const std::size_t target_at = header.find("target"), device_at = header.find("device");
  const std::size_t ms_end = header.find("median ms") + std::string("median ms").size();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::string& line = lines[i + 1];
    const auto& r = records[i];
    EXPECT_EQ(line.rfind(r["workload"].get<std::string>(), 0), 0u) << line;
    EXPECT_EQ(line.substr(target_at, 4), "cpu ") << "target column\n" << table.out;
    const std::string name = r["device_name"], id = r["device"];
    const std::string label = name == kDeviceName ? name + " [" + id.substr(0, 8) + "]" : name;
    EXPECT_EQ(line.substr(device_at, label.size() + 1), label + " ") << "device column\n" << table.out;
    EXPECT_EQ(line.find(id), std::string::npos) << "the id stays in the JSON: " << line;
    const std::string ms = fmt::format("{:.4f}", r["median_seconds"].get<double>() * 1e3);
    EXPECT_EQ(line.find(" " + ms + " ") + 1 + ms.size(), ms_end) << "median ms column\n" << table.out;
  }
  // The JSON as before, field for field: the id under "device", the name beside it.
  for (const auto& r : records)
    for (const char* field : {"workload",       "template",       "target",      "device",        "device_name",
                              "config",         "median_seconds", "gflops",      "error_kind",    "error_message",
                              "costs",          "tuner",          "run_id",      "timestamp",     "is_default",
                              "spread",         "load",           "device_load", "build_seconds", "check_seconds",
                              "timing_seconds", "check_error",    "noisy",       "winner",        "toolchain",
                              "optune_version"})
      EXPECT_TRUE(r.contains(field)) << field << " in " << r.dump();
  EXPECT_EQ(std::count_if(records.begin(), records.end(), [](const json& r) { return r["device"] == kDeviceId; }), 3);
}

}  // namespace
