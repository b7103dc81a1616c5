// What a run that measures holds for its whole length (tuner/device_lock.hpp): the device's lock,
// so two runs never time candidates on one device at once, and for a run that writes records a
// shared hold on its database, which keeps `prune` away.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "optune/kernels/device_info.hpp"
#include "optune/tuner/jobs/device_lock.hpp"

namespace optune::app {

struct RunLocks {
  tuner::FileLock device;
  std::optional<tuner::FileLock> database;
};

// `who` names the run in the lock file and in messages ("tune", "job nightly"). When another run
// measures on the device: with `wait_for_device`, a line to `log` and a wait; without, a
// std::runtime_error naming that run (exit code 1: the input is fine, the device is busy).
RunLocks lock_for_measuring(const std::string& who, const std::string& database_path,
                            const kernels::DeviceInfo& device, bool wait_for_device, bool writes_records,
                            const std::function<void(const std::string&)>& log = nullptr);

}  // namespace optune::app
