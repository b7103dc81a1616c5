// LocalRunner: measures CPU and OpenCL candidates in a separate worker process (optune-worker), one at a
// time, so that a segfault, an abort or an endless loop inside a candidate becomes a crash or
// timeout result and tuning goes on with a fresh worker. The worker keeps inputs and the
// reference result of a workload between candidates.
#pragma once

#include <memory>
#include <string>

#include "optune/measure/runner.hpp"
#include "optune/measure/subprocess.hpp"
#include "optune/measure/timing_policy.hpp"

namespace optune::measure {

struct LocalRunnerOptions {
  std::string worker_path;  // the optune-worker executable
  TimingPolicy timing;
  bool remove_artifacts = true;  // delete each shared object once measured
  std::string opencl_cache_dir;  // OpenCL program binaries; "" = compile every candidate
};

class LocalRunner final : public Runner {
 public:
  explicit LocalRunner(LocalRunnerOptions options);
  ~LocalRunner() override;
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs,
                                 const std::vector<BuildResult>& builds) override;
  MeasureResult measure_one(const MeasureInput& input, const BuildResult& build);

 private:
  Subprocess& worker();
  LocalRunnerOptions options_;
  std::unique_ptr<Subprocess> worker_;
};

}  // namespace optune::measure
