// DeviceSpreadRunner: measures on several devices of one model at once (the GPUs of one host:
// `--target cuda:all`), one worker per device. A batch is spread: each device takes the batch's
// next candidate as it finishes one, so N candidates take about 1/devices of the time on one. A
// comparison (a run of several rounds: the finalists') is not spread, since candidates compared
// with one another must be timed on the same device: each device measures the whole list as a
// round of its own, all devices at once, so the rounds come devices times sooner. Rounds that
// only firm up each candidate's own time (Rounds::kEachItsOwn: a re-measurement) are spread by
// candidate: each device takes its share of the list, all rounds of it.
#pragma once

#include <cstddef>
#include <functional>
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
  std::vector<MeasureResult> measure_round(const std::vector<MeasureInput>& inputs,
                                           const std::vector<BuildResult>& builds) override;
  std::vector<std::vector<MeasureResult>> measure_rounds(const std::vector<MeasureInput>& inputs,
                                                         const std::vector<BuildResult>& builds, int at_most) override;
  std::vector<std::vector<MeasureResult>> own_rounds(const std::vector<MeasureInput>& inputs,
                                                     const std::vector<BuildResult>& builds, int rounds);
  // Runs work(device) for the first `used` devices at once; rethrows the first exception.
  void on_devices(std::size_t used, const std::function<void(std::size_t device)>& work);
  MeasureResult measure_on(std::size_t device, const MeasureInput& input, const BuildResult& build);
  std::vector<std::unique_ptr<LocalRunner>> devices_;
  std::vector<std::size_t> measured_;
};

}  // namespace optune::measure
