// The worker's loop with a backend of the test's own: a fault that leaves the process unable to
// measure (needs_fresh_process) is one runtime_error reply that asks for a fresh worker, and one
// that does not is the same reply without that request.
#include "optune/measure/worker_loop.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace optune::measure
