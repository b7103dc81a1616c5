// DeviceSpreadRunner: measures a batch on several devices of one model at once (the GPUs of one
// host: `--target cuda:all`), one worker per device, each taking the batch's next candidate as it
// finishes one. A batch of N candidates then takes about 1/devices of the time on one, while the
// host builds and chooses as before. A run of several rounds (the finalists' comparison) stays on
// the first device: candidates compared with one another are timed on the same one.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "optune/measure/local_runner.hpp"

namespace optune::measure {

class DeviceSpreadRunner final : public Runner {
 public:
  // One runner per device, each with its LocalRunnerOptions::device_target; at least one.
  DeviceSpreadRunner(std::vector<std::unique_ptr<LocalRunner>> devices, bool remove_artifacts);
  std::size_t device_count() const { return devices_.size(); }
  // Candidates each device has measured so far (failed builds, measured by none, are not counted).
  const std::vector<std::size_t>& measured_per_device() const { return measured_; }

 private:
  void starting_run(int most_rounds) override { one_device_ = most_rounds > 1; }
  std::vector<MeasureResult> measure_round(const std::vector<MeasureInput>& inputs,
                                           const std::vector<BuildResult>& builds) override;
  std::vector<std::unique_ptr<LocalRunner>> devices_;
  std::vector<std::size_t> measured_;
  bool one_device_ = false;
};

}  // namespace optune::measure
