// optune revalidate end to end (issue 38): stored bests of another or an unknown toolchain are
// measured again and found to hold, to have regressed or to be broken; the regressed and broken
// ones are tuned again and their new best recorded under today's toolchain; entries of today's
// toolchain are current and not measured. Real compiles (g++, clang++, a compiler wrapper that
// refuses a config), real SQLite files read back, JSON and JUnit parsed, exit codes; apply-best's
// note on rows of another toolchain. Tiny GEMMs, few trials and short timing keep it fast.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "../support/command_test.hpp"

namespace {

namespace fs = std::filesystem;
using optune::db::Database;
using optune::db::TuningRecord;
using optune::test_support::CommandRun;
using optune::test_support::slurp;

constexpr const char* kWorkload = "gemm.f32.M32.N32.K32";
constexpr const char* kTiming = "--repeat 2 --min-repeat-ms 1";
// Re-tunes as small as they come: a random search of a few configs.
constexpr const char* kRetune = "--trials 2 --tuner random --seed 1 --quiet";

class RevalidateCliTest : public optune::test_support::CommandTest {
 protected:
  fs::path suite() {
    const fs::path file = dir_ / "suite.toml";
    std::ofstream(file) << "name = \"tiny\"\n[[workload]]\nname = \"gemm32\"\nop = \"gemm\"\nshape = \"32,32,32\"\n";
    return file;
  }

  // The default config measured once into `database` (tuner "measure"), by `compiler`.
  void measure_default(const std::string& database, const std::string& compiler) {
    CommandRun run = optune("measure --op gemm --shape 32,32,32 --default --rounds 1 --compiler " + compiler + " " +
                            kTiming + " --db " + database);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
  }

  // The default config made single-threaded, measured once into `database` by `compiler`: the
  // stored best of these tests. A multi-threaded kernel's timing swings by orders of magnitude on
  // a machine whose cores others use (its threads wait for each other), which no tolerance covers;
  // a single-threaded one's hardly moves.
  void measure_single_thread(const std::string& database, const std::string& compiler) {
    const std::string scratch = (dir_ / "default.db").string();
    measure_default(scratch, compiler);
    nlohmann::json config = Database::open(scratch, Database::Mode::kReadOnly).top_k({}, 1).at(0).config;
    config["threads"] = 1;
    config["parallel_loop"] = "jc";  // with one thread the only valid choice
    CommandRun run = optune("measure --op gemm --shape 32,32,32 --config '" + config.dump() + "' --rounds 1 " +
                            "--compiler " + compiler + " " + kTiming + " --db " + database);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
  }

  // revalidate of the suite with --format json: exit code, and the one object it printed.
  struct Revalidated {
    CommandRun run;
    nlohmann::json json;
    const nlohmann::json& entry() const { return json.at("entries").at(0); }
  };
  Revalidated revalidate(const std::string& database, const std::string& arguments,
                         const std::string& retune = kRetune) {
    Revalidated result{optune("revalidate --suite " + suite().string() + " --target cpu --format json " + kTiming +
                              " " + retune + " --db " + database + " " + arguments),
                       nullptr};
    try {
      result.json = nlohmann::json::parse(result.run.out);
    } catch (const nlohmann::json::exception&) {
      ADD_FAILURE() << "not JSON: " << result.run.out << result.run.err;
    }
    return result;
  }

  // A database of one record: the first one of `from` (lowest median first), changed by `change`.
  TuningRecord plant(const std::string& from, const std::string& to, const std::function<void(TuningRecord&)>& change) {
    auto source = Database::open(from, Database::Mode::kReadOnly);
    TuningRecord record = source.top_k({}, 0).at(0);
    record.tuner = "planted";
    record.run_id = "planted";
    change(record);
    Database::open(to).insert({record});
    return record;
  }

  // A record's figures made `factor` times its own, consistently (RecordCheck::figures passes over
  // a record whose median is not its costs' or whose GFLOP/s do not follow).
  static void scale(TuningRecord& record, double factor) {
    for (double& cost : record.costs) cost *= factor;
    record.median_seconds *= factor;
    record.gflops /= factor;
  }

  static std::optional<TuningRecord> best(const std::string& database) {
    auto opened = Database::open(database, Database::Mode::kReadOnly);
    const auto ranked = opened.top_k({}, 1);
    if (ranked.empty()) return std::nullopt;
    return ranked.front();
  }

  // A compiler that is `compiler` under another name (its own --version line), refusing every source
  // that contains `refused` (a config's distinctive value) with an error message, or none.
  fs::path wrapper(const std::string& name, const std::string& compiler, const std::string& refused) {
    const fs::path file = dir_ / name;
    std::ofstream(file) << "#!/bin/sh\n"
                           "if [ \"$1\" = --version ]; then echo '" << name << " 1.0 (wraps " << compiler
                        << ")'; exit 0; fi\n"
                           "for arg in \"$@\"; do\n"
                           "  case \"$arg\" in *.cpp) if grep -q '" << refused << "' \"$arg\"; then\n"
                           "    echo \"$arg:1: error: " << name << " refuses this config\" >&2; exit 1; fi;; esac\n"
                           "done\n"
                           "exec " << compiler << " \"$@\"\n";
    fs::permissions(file, fs::perms::owner_all);
    return file;
  }

  static std::string junit_summary(const fs::path& file) {
    const std::string parsed = file.string() + ".parsed";
    const std::string command =
        "python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
        "s = r.find('testsuite'); c = s.findall('testcase'); "
        "print(r.get('name'), s.get('tests'), s.get('failures'), s.get('skipped'), "
        "sum(len(t.findall('failure')) for t in c))\" " + file.string() + " > " + parsed;
    if (std::system(command.c_str()) != 0) return "unreadable";
    std::string text = slurp(parsed);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
};

// Measured under g++, checked under clang++ with a tolerance nothing exceeds: the stored best
// holds, its re-measurement is recorded under clang++ and stays the best, so a second run finds it
// current. apply-best notes rows of another toolchain than the one it is told is today's.
TEST_F(RevalidateCliTest, BestThatHoldsUnderAnotherCompilerIsRecordedAndThenCurrent) {
  measure_single_thread(db(), "g++");
  const std::string tuned_config = best(db())->config_text();
  const fs::path header = dir_ / "tuned.hpp";
  CommandRun apply = optune("apply-best --db " + db() + " --target cpu --compiler clang++ --out " + header.string());
  ASSERT_EQ(apply.code, 0) << apply.out << apply.err;
  EXPECT_NE(apply.err.find("note: 1 of 1 tuned rows come from records of another or an unknown toolchain than "
                           "today's (gemm.f32.M32.N32.K32: compiler g++ "),
            std::string::npos) << apply.err;
  EXPECT_NE(apply.err.find("optune revalidate re-measures them"), std::string::npos) << apply.err;

  const fs::path junit = dir_ / "holds.xml";
  Revalidated first = revalidate(db(), "--compiler clang++ --tolerance 10 --junit " + junit.string());
  ASSERT_EQ(first.run.code, 0) << first.run.out << first.run.err;
  const auto& entry = first.entry();
  EXPECT_EQ(entry.at("status"), "holds") << entry.dump(2);
  EXPECT_EQ(entry.at("workload"), kWorkload);
  EXPECT_FALSE(entry.at("retuned").get<bool>());
  EXPECT_FALSE(entry.at("failing").get<bool>());
  EXPECT_EQ(entry.at("toolchain_before").at("compiler").get<std::string>().rfind("g++", 0), 0u) << entry.dump(2);
  EXPECT_NE(entry.at("toolchain_change").get<std::string>().find("now Debian clang"), std::string::npos);
  EXPECT_GT(entry.at("now_seconds").get<double>(), 0);
  EXPECT_GT(entry.at("default_seconds").get<double>(), 0);
  EXPECT_GT(entry.at("recorded_seconds").get<double>(), 0);
  EXPECT_EQ(first.json.at("counts").at("holds"), 1);
  EXPECT_EQ(junit_summary(junit), "optune revalidate 1 0 0 0");

  // Recorded: the stored best is the same config, now of clang++.
  const auto after = best(db());
  ASSERT_TRUE(after);
  EXPECT_EQ(after->config_text(), tuned_config);
  EXPECT_EQ(after->tuner, "revalidate");
  EXPECT_EQ(after->toolchain.value("compiler", "").rfind("Debian clang", 0), 0u) << after->toolchain.dump();

  const std::size_t records = Database::open(db(), Database::Mode::kReadOnly).count();
  Revalidated second = revalidate(db(), "--compiler clang++ --tolerance 10");
  ASSERT_EQ(second.run.code, 0) << second.run.out << second.run.err;
  EXPECT_EQ(second.entry().at("status"), "current") << second.entry().dump(2);
  EXPECT_TRUE(second.entry().at("now_seconds").is_null()) << "a current entry is not measured";
  EXPECT_EQ(Database::open(db(), Database::Mode::kReadOnly).count(), records);

  // --all measures a current entry too; under g++ again the clang++ record is another toolchain's.
  Revalidated all = revalidate(db(), "--compiler clang++ --tolerance 10 --all");
  EXPECT_EQ(all.entry().at("status"), "holds") << all.entry().dump(2);
  apply = optune("apply-best --db " + db() + " --target cpu --compiler clang++ --out " + header.string());
  EXPECT_EQ(apply.err.find("toolchain"), std::string::npos) << apply.err;
  apply = optune("apply-best --db " + db() + " --target cpu --compiler g++ --out " + header.string());
  EXPECT_NE(apply.err.find("compiler Debian clang"), std::string::npos) << apply.err;
}

// A stored best recorded far faster than it can run (0.1 us for 65,536 flops on one thread), by
// an older compiler: regressed, tuned again, and the workload's best is then a record of today's
// toolchain measured now.
TEST_F(RevalidateCliTest, RegressedBestIsRetunedAndItsNewBestRecordedUnderTodaysToolchain) {
  const std::string measured = (dir_ / "measured.db").string();
  measure_single_thread(measured, "c++");
  const TuningRecord planted = plant(measured, db(), [](TuningRecord& record) {
    scale(record, 1e-7 / record.median_seconds);
    record.toolchain = {{"compiler", "g++ (GCC) 4.8.5"}, {"flags", "-O2"}};
  });
  const fs::path junit = dir_ / "regressed.xml";
  Revalidated run = revalidate(db(), "--junit " + junit.string());
  ASSERT_EQ(run.run.code, 0) << run.run.out << run.run.err;
  const auto& entry = run.entry();
  EXPECT_EQ(entry.at("status"), "regressed") << entry.dump(2);
  EXPECT_NE(entry.at("reason").get<std::string>().find("its recorded"), std::string::npos) << entry.dump(2);
  EXPECT_EQ(entry.at("attempts"), 3) << "measured again before it is called regressed";
  EXPECT_NE(entry.at("toolchain_change").get<std::string>().find("compiler g++ (GCC) 4.8.5, now "), std::string::npos);
  ASSERT_TRUE(entry.at("retuned").get<bool>());
  const auto& retune = entry.at("retune");
  EXPECT_EQ(retune.at("status_after"), "holds") << retune.dump(2);
  EXPECT_GE(retune.at("trials").get<int>(), 1);
  ASSERT_FALSE(retune.at("best").is_null());
  EXPECT_FALSE(retune.at("old_config").is_null()) << "the old config still builds: measured beside the new best";
  EXPECT_FALSE(entry.at("failing").get<bool>());
  EXPECT_EQ(run.json.at("counts").at("retuned"), 1);
  EXPECT_EQ(junit_summary(junit), "optune revalidate 1 0 0 0");

  // Read back: the best is of today's toolchain, measured now (far slower than the planted figure).
  const auto after = best(db());
  ASSERT_TRUE(after);
  EXPECT_EQ(after->toolchain, run.json.at("toolchain_now")) << after->toolchain.dump();
  EXPECT_TRUE(after->winner);
  EXPECT_GT(after->median_seconds, planted.median_seconds * 2);
  EXPECT_EQ(after->config, retune.at("best").at("config"));
  Revalidated again = revalidate(db(), "");
  EXPECT_EQ(again.run.code, 0) << again.run.out << again.run.err;
  EXPECT_EQ(again.entry().at("status"), "current") << again.entry().dump(2);
}

// A re-tune measures the old toolchain's fastest configs first (tuner "seeded", as many as half its
// trials), the regressed best itself left out, then the tuner's own picks; its run's fastest, the
// old config and the default are measured together at the end.
TEST_F(RevalidateCliTest, RetuneMeasuresTheOldRankingsHeadFirst) {
  const std::string measured = (dir_ / "measured.db").string();
  CommandRun tuned = optune("tune --op gemm --shape 32,32,32 --trials 6 --tuner random --seed 3 --remeasure 0 --quiet " +
                            std::string(kTiming) + " --db " + measured);
  ASSERT_EQ(tuned.code, 0) << tuned.out << tuned.err;
  std::vector<TuningRecord> old = Database::open(measured, Database::Mode::kReadOnly).records({});
  std::vector<TuningRecord> ok;
  for (auto& record : old)
    if (record.ok()) ok.push_back(record);
  ASSERT_GE(ok.size(), 4u);
  std::sort(ok.begin(), ok.end(), [](const auto& a, const auto& b) { return a.median_seconds < b.median_seconds; });
  for (auto& record : ok) record.toolchain = {{"compiler", "g++ (GCC) 4.8.5"}, {"flags", "-O2"}};
  scale(ok.front(), 1e-7 / ok.front().median_seconds);  // the stored best: regressed under any compiler
  ok.front().winner = true;
  Database::open(db()).insert(ok);

  Revalidated run = revalidate(db(), "", "--trials 4 --tuner random --seed 1 --quiet");  // 2 seeded, 2 of the tuner's
  ASSERT_EQ(run.run.code, 0) << run.run.out << run.run.err;
  ASSERT_EQ(run.entry().at("status"), "regressed") << run.entry().dump(2);
  const auto& retune = run.entry().at("retune");
  EXPECT_EQ(retune.at("trials"), 4);
  const std::string run_id = retune.at("run_id");
  std::vector<std::string> seeded, picked;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({}))
    if (record.run_id == run_id && record.tuner == "seeded") seeded.push_back(record.config_text());
    else if (record.run_id == run_id && record.tuner == "random") picked.push_back(record.config_text());
  EXPECT_EQ(seeded, (std::vector<std::string>{ok[1].config_text(), ok[2].config_text()}));
  EXPECT_EQ(picked.size(), 2u);
  for (const auto& config : picked)
    for (const auto& record : ok) EXPECT_NE(config, record.config_text()) << "the tuner's picks are new configs";
}

// A new toolchain that no longer builds the stored best (a compiler wrapper refusing its loop
// order, which the default does not use): broken, tuned again to a config that builds.
TEST_F(RevalidateCliTest, BrokenBestIsRetunedToAConfigThatBuilds) {
  const std::string measured = (dir_ / "measured.db").string();
  measure_default(measured, "g++");
  plant(measured, db(), [](TuningRecord& record) {
    ASSERT_EQ(record.config.at("loop_order"), "jc_pc_ic") << record.config.dump();
    record.config["loop_order"] = "ic_pc_jc";
    record.is_default = false;
    scale(record, 0.5);
  });
  const fs::path strict = wrapper("strict-g++", "g++", "LoopOrder::kIcPcJc");
  const fs::path junit = dir_ / "broken.xml";
  Revalidated run = revalidate(db(), "--compiler " + strict.string() + " --junit " + junit.string());
  ASSERT_EQ(run.run.code, 0) << run.run.out << run.run.err;
  const auto& entry = run.entry();
  EXPECT_EQ(entry.at("status"), "broken") << entry.dump(2);
  EXPECT_EQ(entry.at("error_kind"), "build_error");
  EXPECT_EQ(entry.at("attempts"), 1) << "a compile that failed is not tried again";
  ASSERT_TRUE(entry.at("retuned").get<bool>());
  EXPECT_EQ(entry.at("retune").at("status_after"), "holds") << entry.at("retune").dump(2);
  EXPECT_TRUE(entry.at("retune").at("old_config").is_null());
  EXPECT_EQ(junit_summary(junit), "optune revalidate 1 0 0 0");

  const auto after = best(db());
  ASSERT_TRUE(after);
  EXPECT_NE(after->config.at("loop_order"), "ic_pc_jc") << after->config.dump();
  EXPECT_EQ(after->toolchain.value("compiler", ""), "strict-g++ 1.0 (wraps g++)");
  // The refused config's failure is recorded under the new toolchain.
  bool refused_recorded = false;
  for (const auto& record : Database::open(db(), Database::Mode::kReadOnly).records({}))
    refused_recorded |= record.tuner == "revalidate" && record.error_kind == "build_error" &&
                        record.config.at("loop_order") == "ic_pc_jc";
  EXPECT_TRUE(refused_recorded);
}

// A toolchain that builds nothing: the entry is broken, tuning again finds nothing that works, and
// the run exits 1 with the failure in its JUnit.
TEST_F(RevalidateCliTest, EntryStillBrokenAfterItsRetuneFailsTheRun) {
  const std::string measured = (dir_ / "measured.db").string();
  measure_default(measured, "g++");
  plant(measured, db(), [](TuningRecord&) {});
  const fs::path refusing = wrapper("refusing-g++", "g++", "optune");
  const fs::path junit = dir_ / "failed.xml";
  Revalidated run = revalidate(db(), "--compiler " + refusing.string() + " --junit " + junit.string());
  EXPECT_EQ(run.run.code, 1) << run.run.out << run.run.err;
  EXPECT_EQ(run.entry().at("status"), "broken") << run.entry().dump(2);
  EXPECT_EQ(run.entry().at("retune").at("status_after"), "broken");
  EXPECT_TRUE(run.entry().at("failing").get<bool>());
  EXPECT_EQ(junit_summary(junit), "optune revalidate 1 1 0 1");
}

// Records of schema 5 or older name no toolchain: such a best is measured again, and then current.
// Entries of today's toolchain are current and not measured; a workload never tuned is untuned
// (not tuned here) and skipped in the JUnit. The text table says as much.
TEST_F(RevalidateCliTest, UnknownToolchainIsMeasuredCurrentIsSkippedUntunedIsReported) {
  const std::string measured = (dir_ / "measured.db").string();
  measure_single_thread(measured, "c++");
  plant(measured, db(), [](TuningRecord& record) { record.toolchain = nullptr; });
  Revalidated unknown = revalidate(db(), "--tolerance 10");
  ASSERT_EQ(unknown.run.code, 0) << unknown.run.out << unknown.run.err;
  EXPECT_EQ(unknown.entry().at("status"), "holds") << unknown.entry().dump(2);
  EXPECT_TRUE(unknown.entry().at("toolchain_before").is_null());
  EXPECT_NE(unknown.entry().at("toolchain_change").get<std::string>().find("toolchain unknown (recorded before schema 6)"),
            std::string::npos);

  const std::size_t records = Database::open(db(), Database::Mode::kReadOnly).count();
  const fs::path junit = dir_ / "current.xml";
  CommandRun text = optune("revalidate --suite " + suite().string() + " --workload gemm.f32.M16.N16.K16 --db " + db() +
                           " " + kTiming + " --junit " + junit.string());
  ASSERT_EQ(text.code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find(std::string(kWorkload) + " "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("current"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("gemm.f32.M16.N16.K16"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2 workloads: 1 current, 0 holds, 0 regressed, 0 broken, 1 untuned; 0 re-tuned"),
            std::string::npos) << text.out;
  EXPECT_EQ(Database::open(db(), Database::Mode::kReadOnly).count(), records) << "nothing measured";
  EXPECT_EQ(junit_summary(junit), "optune revalidate 2 0 1 0");
}

TEST_F(RevalidateCliTest, BadInputExitsTwoWithOneLine) {
  expect_bad_input("revalidate --db " + db(), "--suite");
  expect_bad_input("revalidate --op gemm --shape 32,x,32 --db " + db(), "--shape");
  expect_bad_input("revalidate --workload gemm.bogus --db " + db(), "--workload gemm.bogus");
  expect_bad_input("revalidate --shape 32,32,32 --layout nchw8c --db " + db(), "--layout");
  expect_bad_input("revalidate --shape 32,32,32 --tolerance -1 --db " + db(), "--tolerance");
  expect_bad_input("revalidate --shape 32,32,32 --trials 0 --db " + db(), "--trials");
  expect_bad_input("revalidate --shape 32,32,32 --format xml --db " + db(), "--format");
  expect_bad_input("revalidate --shape 32,32,32 --tuner nope --db " + db(), "nope");
  EXPECT_FALSE(fs::exists(db())) << "bad input opens no database";
}

}  // namespace
