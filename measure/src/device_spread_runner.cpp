#include "optune/measure/device_spread_runner.hpp"

#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>

namespace optune::measure {

DeviceSpreadRunner::DeviceSpreadRunner(std::vector<std::unique_ptr<LocalRunner>> devices, bool remove_artifacts)
    : Runner(remove_artifacts), devices_(std::move(devices)), measured_(devices_.size(), 0) {
  if (devices_.empty()) throw std::invalid_argument("DeviceSpreadRunner: no device");
}

std::vector<MeasureResult> DeviceSpreadRunner::measure_round(const std::vector<MeasureInput>& inputs,
                                                             const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results(inputs.size());
  // Each device's worker takes the next candidate when it is done with one: candidates differ in
  // time by orders of magnitude, so an even split in advance would leave devices idle.
  std::atomic<std::size_t> next{0};
  const auto measure_on = [&](std::size_t device) {
    for (std::size_t i = next++; i < inputs.size(); i = next++) {
      results[i] = devices_[device]->measure_one(inputs[i], builds[i]);
      if (builds[i].ok()) ++measured_[device];
    }
  };
  const std::size_t used = one_device_ ? 1 : std::min(devices_.size(), inputs.size());
  if (used <= 1) {
    measure_on(0);
    return results;
  }
  std::vector<std::exception_ptr> errors(used);
  std::vector<std::thread> threads;
  for (std::size_t device = 0; device < used; ++device)
    threads.emplace_back([&, device] {
      try {
        measure_on(device);
      } catch (...) {
        errors[device] = std::current_exception();
        next = inputs.size();  // the others stop after their candidate in flight
      }
    });
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  return results;
}

}  // namespace optune::measure
