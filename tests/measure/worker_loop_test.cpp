// The worker's loop with backends of the test's own: a fault that leaves the process unable to
// measure (needs_fresh_process) is one runtime_error reply that asks for a fresh worker, and one
// that does not is the same reply without that request. Candidates of a known pace are timed only
// as long as their rank needs (TimingPolicy): cut as slow over the bail-out bound, fewer repeats
// the further behind the best, three where the repeats agree, every repeat otherwise. Every reply whose check ran carries
// the check's error, and a wrong output is a wrong answer with its error.
#include "optune/measure/worker_loop.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "optune/measure/worker_messages.hpp"

namespace optune::measure {
namespace {

class FaultingBackend : public WorkerBackend {
 public:
  FaultingBackend(bool process_lost, int* resets) : process_lost_(process_lost), resets_(resets) {}
  std::string_view name() const override { return "faulty"; }
  std::vector<kernels::DeviceInfo> devices() override { return {}; }
  kernels::DeviceInfo device(const kernels::Target&) override { return {}; }
  void prepare(const WorkerRequest&, const Operands&) override { throw std::runtime_error("device lost"); }
  std::unique_ptr<LoadedCandidate> load(const WorkerRequest&, Operands&, WorkerReply&) override { return nullptr; }
  bool run_reference(const WorkerRequest&, Operands&, WorkerReply&) override { return true; }
  void reset() override { ++*resets_; }
  bool needs_fresh_process() const override { return process_lost_; }

 private:
  bool process_lost_;
  int* resets_;
};

WorkerReply reply_of_one_request(bool process_lost, int* resets) {
  WorkerRequest request;
  request.workload = "gemm.f32.M4.N4.K4";
  request.target = "faulty";
  request.artifact = "candidate.so";
  std::istringstream in(nlohmann::json(request).dump() + "\n");
  std::ostringstream out;
  std::vector<std::unique_ptr<WorkerBackend>> backends;
  backends.push_back(std::make_unique<FaultingBackend>(process_lost, resets));
  EXPECT_EQ(run_worker_loop(in, out, std::move(backends)), 0);
  return nlohmann::json::parse(out.str()).get<WorkerReply>();
}

TEST(WorkerLoop, AFaultThatLosesTheProcessAsksForAFreshWorker) {
  int resets = 0;
  const WorkerReply reply = reply_of_one_request(true, &resets);
  EXPECT_EQ(reply.status, "runtime_error");
  EXPECT_EQ(reply.message, "device lost");
  EXPECT_EQ(reply.replace_worker, std::optional<bool>(true));
  EXPECT_EQ(resets, 1);
}

TEST(WorkerLoop, AFaultTheBackendRecoversFromKeepsTheWorker) {
  int resets = 0;
  const WorkerReply reply = reply_of_one_request(false, &resets);
  EXPECT_EQ(reply.status, "runtime_error");
  EXPECT_EQ(reply.message, "device lost");
  EXPECT_FALSE(reply.replace_worker.value_or(false));
  EXPECT_EQ(resets, 1);
}

// A candidate that writes the exact result times `scale` (1: it passes the check) and reports a
// fixed time a run, or (jitter > 0) one that alternates between (1 - jitter) and (1 + jitter)
// times it from call to call; call `burst` (0: the check's) reads kBurst times as long, as under a
// burst of load; `runs` counts the kernel's runs.
constexpr double kBurst = 2.2;
class PacedCandidate : public LoadedCandidate {
 public:
  PacedCandidate(Operands& operands, double seconds_per_run, double jitter, int burst, double scale, int& runs)
      : operands_(operands), seconds_(seconds_per_run), jitter_(jitter), burst_(burst), scale_(scale), runs_(runs) {}
  void poison_output() override {}
  double run(int times) override {
    runs_ += times;
    HostArgument& output = operands_.values.args.back();
    for (std::size_t i = 0; i < operands_.reference.size(); ++i) {
      const auto value = static_cast<float>(scale_ * operands_.reference[i]);
      std::memcpy(output.bytes.data() + i * sizeof value, &value, sizeof value);
    }
    const double load = calls_ == burst_ ? kBurst : 1;
    return load * seconds_ * (1 + (calls_++ % 2 == 0 ? -jitter_ : jitter_));
  }

 private:
  Operands& operands_;
  double seconds_;
  double jitter_;
  int burst_;
  double scale_;
  int& runs_;
  int calls_ = 0;
};

// The artifact's name is the candidate's time a run in seconds, after a comma its jitter, and
// after another the call its burst of load falls on (none: -1).
class PacedBackend : public WorkerBackend {
 public:
  PacedBackend(double scale, int& runs) : scale_(scale), runs_(runs) {}
  std::string_view name() const override { return "paced"; }
  std::vector<kernels::DeviceInfo> devices() override { return {}; }
  kernels::DeviceInfo device(const kernels::Target&) override { return {}; }
  std::unique_ptr<LoadedCandidate> load(const WorkerRequest& request, Operands& operands, WorkerReply&) override {
    const auto comma = request.artifact.find(',');
    const auto second = comma == std::string::npos ? comma : request.artifact.find(',', comma + 1);
    const double jitter = comma == std::string::npos ? 0 : std::stod(request.artifact.substr(comma + 1));
    const int burst = second == std::string::npos ? -1 : std::stoi(request.artifact.substr(second + 1));
    return std::make_unique<PacedCandidate>(operands, std::stod(request.artifact), jitter, burst, scale_, runs_);
  }
  bool run_reference(const WorkerRequest&, Operands&, WorkerReply&) override { return true; }

 private:
  double scale_;
  int& runs_;
};

WorkerReply time_paced(double seconds_per_run, std::optional<double> best, double bail_out = 2,
                       bool adaptive = true, double scale = 1, double jitter = 0, int* runs = nullptr,
                       int burst = -1) {
  WorkerRequest request;
  request.workload = "gemm.f32.M8.N8.K8";
  request.target = "paced";
  request.artifact = std::to_string(seconds_per_run) + "," + std::to_string(jitter) + "," + std::to_string(burst);
  request.best_seconds = best;
  request.timing.bail_out = bail_out;
  request.timing.adaptive = adaptive;
  // The request as a runner sends it: through its JSON form.
  std::istringstream in(nlohmann::json(request).dump() + "\n");
  std::ostringstream out;
  std::vector<std::unique_ptr<WorkerBackend>> backends;
  int counted = 0;
  backends.push_back(std::make_unique<PacedBackend>(scale, runs ? *runs : counted));
  EXPECT_EQ(run_worker_loop(in, out, std::move(backends)), 0);
  return nlohmann::json::parse(out.str()).get<WorkerReply>();
}

TEST(WorkerLoopTiming, ACandidateWithoutABestIsTimedInFullHoweverSlow) {
  const WorkerReply reply = time_paced(0.010, std::nullopt);
  EXPECT_EQ(reply.status, "ok") << reply.message;
  EXPECT_EQ(reply.costs.size(), 5u);
  ASSERT_TRUE(reply.check_seconds && reply.timing_seconds);
  EXPECT_GE(*reply.check_seconds, 0);
  EXPECT_GE(*reply.timing_seconds, 0);
  // The exact result rounded to float: a relative L2 error of float's rounding, well within 1e-4.
  ASSERT_TRUE(reply.error);
  EXPECT_GE(*reply.error, 0);
  EXPECT_LT(*reply.error, 1e-6);
}

// A repeat is the whole number of runs nearest to min_repeat_ms (40 ms); a run that sizes it at
// one is the first repeat, not one more run. Shorter ones are sized by a run of their own.
TEST(WorkerLoopTiming, ARunAsLongAsARepeatIsTheFirstRepeat) {
  for (const double seconds : {0.050, 0.035}) {
    int runs = 0;
    const WorkerReply reply = time_paced(seconds, std::nullopt, 2, true, 1, 0, &runs);
    EXPECT_EQ(reply.status, "ok") << reply.message;
    EXPECT_EQ(reply.number, 1) << seconds;
    ASSERT_EQ(reply.costs.size(), 5u);
    EXPECT_DOUBLE_EQ(reply.costs[0], seconds);
    EXPECT_EQ(runs, 1 + 5) << "the check's run and five repeats of one run";
  }
  int runs = 0;
  WorkerReply reply = time_paced(0.015, std::nullopt, 2, true, 1, 0, &runs);
  EXPECT_EQ(reply.number, 3);
  EXPECT_EQ(runs, 1 + 1 + 5 * 3) << "the check's run, the sizing run and five repeats of three";
  // Cut after its first repeat: one timed run, the sizing one.
  runs = 0;
  reply = time_paced(0.150, 0.060, 2, true, 1, 0, &runs);
  EXPECT_EQ(reply.status, "slow") << reply.message;
  EXPECT_NE(reply.message.find("after 1 of 5 repeats"), std::string::npos) << reply.message;
  EXPECT_EQ(runs, 2);
}

TEST(WorkerLoopCheck, AWrongOutputIsAWrongAnswerWithItsErrorAndNoTiming) {
  WorkerReply reply = time_paced(0.001, std::nullopt, 2, true, 1.01);
  EXPECT_EQ(reply.status, "wrong_answer");
  EXPECT_NE(reply.message.find("relative L2 error"), std::string::npos) << reply.message;
  ASSERT_TRUE(reply.error);
  EXPECT_NEAR(*reply.error, 0.01, 1e-5) << "every element 1% off";
  EXPECT_TRUE(reply.costs.empty());
  EXPECT_FALSE(reply.timing_seconds.has_value());
  // NaN in the output: an error that is no number, which the reply gives as -1.
  reply = time_paced(0.001, std::nullopt, 2, true, std::nan(""));
  EXPECT_EQ(reply.status, "wrong_answer");
  EXPECT_EQ(reply.error, std::optional<double>(-1.0));
}

TEST(WorkerLoopTiming, OverTheBailOutBoundTheTimingStopsAsSlow) {
  // 3 ms against a best of 1 ms: over 2x after the first repeat, not over 4x in the first run.
  WorkerReply reply = time_paced(0.003, 0.001);
  EXPECT_EQ(reply.status, "slow");
  ASSERT_EQ(reply.costs.size(), 1u);
  EXPECT_DOUBLE_EQ(reply.costs[0], 0.003);
  EXPECT_NE(reply.message.find("after 1 of 5 repeats"), std::string::npos) << reply.message;
  EXPECT_NE(reply.message.find("over 2x the best"), std::string::npos) << reply.message;
  EXPECT_TRUE(reply.check_seconds.has_value());
  EXPECT_TRUE(reply.error.has_value()) << "a slow candidate passed its check";
  // 10 ms: over twice the bound in the run that sizes the repeats, so no repeat runs at all.
  reply = time_paced(0.010, 0.001);
  EXPECT_EQ(reply.status, "slow");
  EXPECT_NE(reply.message.find("after 0 of 5 repeats"), std::string::npos) << reply.message;
  // The factor is the request's: at 4x the 3 ms candidate is no longer cut.
  EXPECT_EQ(time_paced(0.003, 0.001, 4).status, "ok");
}

// A burst of load that more than doubles the first repeat of the eventual winner does not cut it
// where the sizing run is a reading of its own: the faster reading decides. A repeat of one run,
// the sizing run itself, still decides alone.
TEST(WorkerLoopTiming, AFirstRepeatUnderABurstOfLoadCutsNoCandidateTheSizingRunReadsFast) {
  // 1 ms against a best of 1 ms, repeats of 40 runs: the first repeat (call 2) reads 2.2 ms.
  WorkerReply reply = time_paced(0.001, 0.001, 2, true, 1, 0, nullptr, 2);
  EXPECT_EQ(reply.status, "ok") << reply.message;
  ASSERT_EQ(reply.costs.size(), 5u) << "its repeats spread wide: all five";
  EXPECT_DOUBLE_EQ(reply.costs[0], 0.001 * kBurst);
  EXPECT_DOUBLE_EQ(reply.costs[1], 0.001);
  // Slow in truth, the sizing run too: cut after the first repeat.
  reply = time_paced(0.0025, 0.001);
  EXPECT_EQ(reply.status, "slow") << reply.message;
  EXPECT_NE(reply.message.find("after 1 of 5 repeats"), std::string::npos) << reply.message;
  // 50 ms a run, each repeat one run, its first the sizing run (call 1) reading 110 ms: alone, it
  // decides.
  reply = time_paced(0.050, 0.050, 2, true, 1, 0, nullptr, 1);
  EXPECT_EQ(reply.status, "slow") << reply.message;
}

// The further a candidate is behind the best, the fewer repeats it gets: one at 1.6x, two at 1.4x,
// three at 1.2x; a close one (or a new best) three where its repeats agree within 2%, all five
// where they spread wider.
TEST(WorkerLoopTiming, TheFurtherBehindTheBestTheSoonerTheTimingEnds) {
  const auto repeats = [](double seconds, double jitter) {
    return time_paced(seconds, 0.001, 2, true, 1, jitter).costs.size();
  };
  EXPECT_EQ(repeats(0.0016, 0), 1u);
  EXPECT_EQ(repeats(0.0014, 0), 2u);
  EXPECT_EQ(repeats(0.0012, 0), 3u);
  EXPECT_EQ(repeats(0.00105, 0.005), static_cast<std::size_t>(kSettledRepeats));
  EXPECT_EQ(repeats(0.0009, 0.005), static_cast<std::size_t>(kSettledRepeats));
  EXPECT_EQ(repeats(0.00105, 0.03), 5u);
  EXPECT_EQ(repeats(0.0009, 0.03), 5u);
  // Full timing: every repeat, however close or far.
  EXPECT_EQ(time_paced(0.0014, 0.001, 2, false).costs.size(), 5u);
  EXPECT_EQ(time_paced(0.00105, 0.001, 2, false).costs.size(), 5u);
}

TEST(WorkerLoopTiming, BailOutOffAndFullTimingTimeEveryRepeat) {
  WorkerReply reply = time_paced(0.010, 0.001, 0, false);
  EXPECT_EQ(reply.status, "ok");
  EXPECT_EQ(reply.costs.size(), 5u);
  reply = time_paced(0.010, 0.001, 0, true);  // no bail-out, adaptive: clearly slower, one repeat
  EXPECT_EQ(reply.status, "ok");
  EXPECT_EQ(reply.costs.size(), 1u);
}

TEST(WorkerLoopTiming, APeerWithoutTheNewFieldsTimesInFullAndABadBestIsMalformed) {
  nlohmann::json request = WorkerRequest{};
  request["timing"].erase("bail_out");
  request["timing"].erase("adaptive");
  const WorkerRequest read = request.get<WorkerRequest>();
  EXPECT_EQ(read.timing.bail_out, 0);
  EXPECT_FALSE(read.timing.adaptive);
  request["best_seconds"] = -1;
  EXPECT_THROW(request.get<WorkerRequest>(), std::invalid_argument);
}

}  // namespace
}  // namespace optune::measure
