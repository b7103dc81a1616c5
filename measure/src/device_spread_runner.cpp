#include "optune/measure/device_spread_runner.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>

namespace optune::measure {

DeviceSpreadRunner::DeviceSpreadRunner(std::vector<std::unique_ptr<LocalRunner>> devices, bool remove_artifacts)
    : Runner(remove_artifacts), devices_(std::move(devices)), measured_(devices_.size(), 0) {
  if (devices_.empty()) throw std::invalid_argument("DeviceSpreadRunner: no device");
}

MeasureResult DeviceSpreadRunner::measure_on(std::size_t device, const MeasureInput& input, const BuildResult& build) {
  MeasureResult result = devices_[device]->measure_one(input, build, is_comparing());
  if (build.ok()) ++measured_[device];
  return result;
}

void DeviceSpreadRunner::on_devices(std::size_t used, const std::function<void(std::size_t device)>& work) {
  if (used <= 1) return work(0);
  std::vector<std::exception_ptr> errors(used);
  std::vector<std::thread> threads;
  for (std::size_t device = 0; device < used; ++device)
    threads.emplace_back([&, device] {
      try {
        work(device);
      } catch (...) {
        errors[device] = std::current_exception();
      }
    });
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
}

std::vector<MeasureResult> DeviceSpreadRunner::measure_round(const std::vector<MeasureInput>& inputs,
                                                             const std::vector<BuildResult>& builds) {
  std::vector<MeasureResult> results(inputs.size());
  // Each device's worker takes the next candidate when it is done with one: candidates differ in
  // time by orders of magnitude, so an even split in advance would leave devices idle.
  std::atomic<std::size_t> next{0};
  on_devices(std::min(devices_.size(), inputs.size()), [&](std::size_t device) {
    try {
      for (std::size_t i = next++; i < inputs.size(); i = next++) results[i] = measure_on(device, inputs[i], builds[i]);
    } catch (...) {
      next = inputs.size();  // the others stop after their candidate in flight
      throw;
    }
  });
  return results;
}

std::vector<std::vector<MeasureResult>> DeviceSpreadRunner::measure_rounds(const std::vector<MeasureInput>& inputs,
                                                                           const std::vector<BuildResult>& builds,
                                                                           int at_most) {
  if (!is_comparing()) return {measure_round(inputs, builds)};
  if (rounds_kind() == Rounds::kEachItsOwn) return own_rounds(inputs, builds, std::max(at_most, 1));
  const std::size_t used = std::min(devices_.size(), static_cast<std::size_t>(std::max(at_most, 1)));
  std::vector<std::vector<MeasureResult>> rounds(used, std::vector<MeasureResult>(inputs.size()));
  on_devices(used, [&](std::size_t device) {
    for (std::size_t i = 0; i < inputs.size(); ++i) rounds[device][i] = measure_on(device, inputs[i], builds[i]);
  });
  return rounds;
}

// Each candidate's rounds on one device: the candidates dealt out to the devices in turn (near
// the best, they take about as long as one another), each device interleaving the rounds of its
// own. A candidate that failed is not measured again.
std::vector<std::vector<MeasureResult>> DeviceSpreadRunner::own_rounds(const std::vector<MeasureInput>& inputs,
                                                                       const std::vector<BuildResult>& builds,
                                                                       int rounds) {
  const std::size_t used = std::min(devices_.size(), inputs.size());
  std::vector<std::vector<MeasureResult>> results(rounds, std::vector<MeasureResult>(inputs.size()));
  on_devices(used, [&](std::size_t device) {
    for (int round = 0; round < rounds; ++round)
      for (std::size_t i = device; i < inputs.size(); i += used)
        results[round][i] = round > 0 && !results[round - 1][i].ok() ? results[round - 1][i]
                                                                      : measure_on(device, inputs[i], builds[i]);
  });
  return results;
}

}  // namespace optune::measure
