// Job files (optune/tuner/jobs/job.hpp) and the regression verdicts and JUnit XML of optune regress.
#include "optune/tuner/jobs/job.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "optune/tuner/results/regression.hpp"

namespace optune::tuner {
namespace {

constexpr const char* kInlineJob = R"(
name = "tiny"
budget = 12
batch_size = 2
database = "/tmp/x/tuning.db"
[[workload]]
op = "gemm"
shape = "48,40,36"
[[workload]]
name = "second"
op = "gemm"
shape = "M=32,N=32,K=32"
count = 3
[measure]
repeat = 2
min_repeat_ms = 1
timeout = 5
)";

TEST(JobFileTest, ReadsInlineWorkloadsBudgetAndMeasurement) {
  JobSpec job = parse_job(kInlineJob, "tiny.toml");
  EXPECT_EQ(job.name, "tiny");
  EXPECT_EQ(job.run_id(), "job:tiny");
  EXPECT_EQ(job.target, "cpu");
  EXPECT_EQ(job.tuner, "xgb");
  ASSERT_EQ(job.suite.entries.size(), 2u);
  EXPECT_EQ(job.suite.entries[1].workload.key(), "gemm.f32.M32.N32.K32");
  EXPECT_EQ(job.suite.entries[1].count, 3);
  EXPECT_EQ(job.budget.total_trials, 12u);
  EXPECT_EQ(job.budget.seconds, 0);
  EXPECT_EQ(job.batch_size, 2u);
  EXPECT_EQ(job.timing.repeat, 2);
  EXPECT_EQ(job.min_repeat_ms, 1.0);  // given: the backend's default does not apply
  EXPECT_EQ(job.timing.timeout_seconds, 5);
  EXPECT_EQ(job.log, "/tmp/x/tiny.log");  // next to the database
}

// A database on a server has no folder here: the log goes next to the job file.
TEST(JobFileTest, TheLogOfAJobWritingAServerGoesNextToTheJobFile) {
  const std::string text = "name = \"team\"\nbudget = 4\ndatabase = \"postgresql://optune@db.lab/optune\"\n"
                           "[[workload]]\nop = \"gemm\"\nshape = \"32,32,32\"\n";
  EXPECT_EQ(parse_job(text, "/srv/jobs/team.toml").log, "/srv/jobs/team.log");
  EXPECT_EQ(parse_job(text, "/srv/jobs/team.toml").database, "postgresql://optune@db.lab/optune");
}

TEST(JobFileTest, TimeBudgetWithPerTaskCap) {
  JobSpec job = parse_job(
      "name = \"t\"\nbudget = \"1h30m\"\ntrials_per_task = 50\nrpc = \"pi@h:9190\"\n"
      "suite = \"" OPTUNE_SOURCE_DIR "/configs/workloads/resnet18.toml\"\n",
      "t.toml");
  EXPECT_EQ(job.budget.seconds, 5400);
  EXPECT_EQ(job.budget.trials_per_task, 50u);
  EXPECT_EQ(job.rpc, "pi@h:9190");
  EXPECT_GT(job.suite.entries.size(), 3u);
  EXPECT_FALSE(job.min_repeat_ms);  // none given: the target backend's default
}

void expect_job_error(const std::string& text, const std::string& words) {
  try {
    parse_job(text, "bad.toml");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const JobError& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).rfind("bad.toml", 0), 0u) << error.what();
  }
}

TEST(JobFileTest, MalformedJobsNameFileLineAndProblem) {
  const std::string workload = "[[workload]]\nop = \"gemm\"\nshape = \"8,8,8\"\n";
  expect_job_error("budget = 5\n" + workload, "missing 'name'");
  expect_job_error("name = \"a b\"\nbudget = 5\n" + workload, "'name' may hold only");
  expect_job_error("name = \"a\"\n" + workload, "missing 'budget'");
  expect_job_error("name = \"a\"\nbudget = \"8 hours\"\n" + workload, "bad.toml:2: 'budget'");
  expect_job_error("name = \"a\"\nbudget = 0\n" + workload, "at least 1");
  expect_job_error("name = \"a\"\nbudget = 5\n", "no workloads");
  expect_job_error("name = \"a\"\nbudget = 5\ntuner = \"magic\"\n" + workload, "unknown tuner 'magic'");
  expect_job_error("name = \"a\"\nbudget = 5\nbatchsize = 2\n" + workload, "bad.toml:3: unknown key 'batchsize'");
  expect_job_error("name = \"a\"\nbudget = 5\n[measure]\nrepeat = -1\n" + workload, "'repeat' must be");
  expect_job_error("name = \"a\"\nbudget = 5\n[[workload]]\nop = \"gemm\"\nshape = \"0,8,8\"\n", "bad.toml");
  expect_job_error("name = \"a\"\nbudget = 5\nsuite = \"/nonexistent.toml\"\n", "cannot read the suite");
  expect_job_error("name = \"a\"\nbudget = [\n", "bad.toml:");
}

TEST(JobFileTest, BailOutAndTimingOfTheMeasureTable) {
  const std::string workload = "[[workload]]\nop = \"gemm\"\nshape = \"8,8,8\"\n";
  const std::string head = "name = \"a\"\nbudget = 5\n[measure]\n";
  JobSpec job = parse_job(head + workload, "a.toml");
  EXPECT_EQ(job.timing.bail_out, 2);  // the defaults, as the command's
  EXPECT_TRUE(job.timing.adaptive);
  job = parse_job(head + "bail_out = 3.5\ntiming = \"full\"\n" + workload, "a.toml");
  EXPECT_EQ(job.timing.bail_out, 3.5);
  EXPECT_FALSE(job.timing.adaptive);
  job = parse_job(head + "bail_out = \"off\"\n" + workload, "a.toml");
  EXPECT_EQ(job.timing.bail_out, 0);
  expect_job_error(head + "bail_out = 1\n" + workload, "bad.toml:4: 'bail_out' must be \"off\" or a factor from 1.1");
  expect_job_error(head + "bail_out = \"never\"\n" + workload, "'bail_out' must be");
  expect_job_error(head + "timing = \"quick\"\n" + workload, "bad.toml:4: 'timing' must be \"adaptive\" or \"full\"");
}

// A budget of 400 digits is one clear line, as a time or as trials (it was "bad.toml:2: 'budget':
// stod", and the digits alone "stoul").
TEST(JobFileTest, BudgetsTooLargeAreNamedAsSuch) {
  const std::string workload = "[[workload]]\nop = \"gemm\"\nshape = \"8,8,8\"\n";
  const std::string digits(400, '9');
  expect_job_error("name = \"a\"\nbudget = \"" + digits + "h\"\n" + workload, "bad.toml:2: 'budget': duration '");
  expect_job_error("name = \"a\"\nbudget = \"" + digits + "h\"\n" + workload, "is longer than 3650d");
  expect_job_error("name = \"a\"\nbudget = \"" + digits + "\"\n" + workload, "at most 100000000");
  expect_job_error("name = \"a\"\nbudget = 1000000000000\n" + workload, "at most 100000000");
}

TEST(JobFileTest, ShippedJobsParse) {
  // Their paths are relative to the repository root, where they are run from.
  const auto here = std::filesystem::current_path();
  std::filesystem::current_path(OPTUNE_SOURCE_DIR);
  std::size_t jobs = 0;
  for (const auto& file : std::filesystem::directory_iterator("configs/jobs")) {
    JobSpec job;
    EXPECT_NO_THROW(job = load_job(file.path().string())) << file.path();
    EXPECT_FALSE(job.suite.entries.empty()) << file.path();
    ++jobs;
  }
  std::filesystem::current_path(here);
  EXPECT_GE(jobs, 3u);
}

measure::MeasureResult timed(double seconds) {
  measure::MeasureResult result;
  result.median_seconds = seconds;
  return result;
}

TEST(RegressionTest, VerdictsFollowTheTolerance) {
  RegressionCase c{"w", "gemm.f32.M8.N8.K8", 1.0, timed(1.04), timed(2.0), 0.1};
  EXPECT_EQ(judge(c, 0.05).verdict, Verdict::kPass);
  c.tuned_now = timed(1.06);  // 6% slower than recorded
  EXPECT_EQ(judge(c, 0.05).verdict, Verdict::kRegression);
  EXPECT_NE(judge(c, 0.05).reason.find("recorded"), std::string::npos);
  EXPECT_EQ(judge(c, 0.10).verdict, Verdict::kPass);
  c.tuned_now = timed(1.0);
  c.default_now = timed(0.9);  // the default beats the tuned config now
  EXPECT_EQ(judge(c, 0.05).verdict, Verdict::kRegression);
  EXPECT_NE(judge(c, 0.05).reason.find("default"), std::string::npos);
  c.tuned_now->error = measure::ErrorKind::kCrash;
  EXPECT_EQ(judge(c, 0.05).verdict, Verdict::kRegression);
  c.recorded_seconds.reset();
  c.tuned_now.reset();
  EXPECT_EQ(judge(c, 0.05).verdict, Verdict::kUntuned);
}

TEST(RegressionTest, BestOfKeepsTheFastestSuccessAndTheVerdictSaysHowManyRuns) {
  measure::MeasureResult crashed = timed(0.5);
  crashed.error = measure::ErrorKind::kCrash;
  EXPECT_EQ(best_of(std::nullopt, timed(3.0)).median_seconds, 3.0);
  EXPECT_EQ(best_of(timed(3.0), timed(2.0)).median_seconds, 2.0);
  EXPECT_EQ(best_of(timed(2.0), timed(3.0)).median_seconds, 2.0);
  EXPECT_TRUE(best_of(crashed, timed(3.0)).ok());
  EXPECT_TRUE(best_of(timed(3.0), crashed).ok());
  EXPECT_FALSE(best_of(crashed, crashed).ok());

  RegressionCase c{"w", "gemm.f32.M8.N8.K8", 1.0, timed(2.0), timed(2.0), 0.1};
  EXPECT_EQ(judge(c, 0.05).reason.find("best of"), std::string::npos);
  c.attempts = 3;
  EXPECT_NE(judge(c, 0.05).reason.find("(best of 3 measurements)"), std::string::npos);
  c.tuned_now = timed(1.0);
  EXPECT_EQ(judge(c, 0.05).verdict, Verdict::kPass);
  EXPECT_EQ(judge(c, 0.05).reason, "");
}

TEST(RegressionTest, ARegressionMeasuredOnABusyMachineSaysSo) {
  measure::MeasureResult busy = timed(2.0);
  busy.costs = {2.0, 2.0, 2.0};
  busy.load = 0.6;
  RegressionCase c{"w", "gemm.f32.M8.N8.K8", 1.0, busy, timed(3.0), 0.1};
  const Judgement judgement = judge(c, 0.05);
  EXPECT_EQ(judgement.verdict, Verdict::kRegression);
  EXPECT_NE(judgement.reason.find("noisy: the tuned config measured while other processes took 60% of the CPU"),
            std::string::npos)
      << judgement.reason;
  c.tuned_now->load = 0.01;
  EXPECT_EQ(judge(c, 0.05).reason.find("noisy"), std::string::npos) << judge(c, 0.05).reason;
}

TEST(RegressionTest, TheRecordedFigureGoesByQuietRecordsWhereThereAreAny) {
  const auto dir = std::filesystem::temp_directory_path() / ("optune-recorded-figure-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "quiet.db").string();
  const std::string noisy_path = (dir / "noisy.db").string();
  const db::TaskKey task{"gemm.f32.M8.N8.K8", "gemm.cpu", "cpu", "dev"};
  auto record = [&](double seconds, std::optional<double> load) {
    db::TuningRecord r;
    r.workload_key = task.workload_key;
    r.template_name = task.template_name;
    r.target = task.target;
    r.device_id = task.device_id;
    r.device_fingerprint = {{"name", "cpu"}};
    r.config = {{"tile", 8}};
    r.costs = {seconds};
    r.median_seconds = seconds;
    r.gflops = 1;
    r.timestamp = 1000 + seconds;
    r.load = load;
    return r;
  };
  {
    auto database = db::Database::open(path);
    // Two quiet measurements of 1 s; three taken beside a build, slower.
    database.insert({record(1.0, 0.0), record(1.02, 0.01), record(5.0, 0.8), record(6.0, 0.9), record(7.0, 0.7)});
    EXPECT_DOUBLE_EQ(*recorded_figure(database, task, record(1.0, 0.0)), 1.01);
  }
  {
    auto database = db::Database::open(noisy_path);
    database.insert({record(5.0, 0.8), record(7.0, 0.7)});
    EXPECT_DOUBLE_EQ(*recorded_figure(database, task, record(5.0, 0.8)), 6.0) << "noisy ones when there is nothing else";
  }
  std::filesystem::remove_all(dir);
}

TEST(RegressionTest, JunitCountsFailuresAndSkipsAndEscapes) {
  std::vector<RegressionCase> cases = {
      {"a", "gemm.f32.M8.N8.K8", 1.0, timed(1.0), timed(2.0), 0.5},
      {"b", "gemm.f32.M16.N8.K8", 1e-9, timed(1.0), timed(2.0), 0.25},
      {"c", "gemm<&>", std::nullopt, std::nullopt, timed(2.0), 0.25},
  };
  std::string xml = junit_xml(cases, 0.05, "suite\"1");
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure type=\"regression\""), std::string::npos);
  EXPECT_NE(xml.find("name=\"gemm&lt;&amp;&gt;\""), std::string::npos);
  EXPECT_NE(xml.find("suite&quot;1"), std::string::npos);
  EXPECT_EQ(xml.find("suite\"1"), std::string::npos);
}

// One line whatever the file quotes (found by fuzz_suite_job_toml: toml++ names the newline it saw).
TEST(JobFileTest, ErrorsQuotingTheFilesNewlinesStayOneLine) {
  const std::string workload = "[[workload]]\nop = \"gemm\"\nshape = \"8,8,8\"\n";
  for (const std::string& text :
       {std::string("name = \"a\"\nbudget =n\n"), "name = \"a\"\nbudget = 5\ntuner = \"x\\ny\"\n" + workload}) {
    try {
      parse_job(text, "bad.toml");
      FAIL() << text;
    } catch (const JobError& error) {
      EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("bad.toml:"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace optune::tuner
