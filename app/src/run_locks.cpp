#include "optune/app/run_locks.hpp"

namespace optune::app {

RunLocks lock_for_measuring(const std::string& who, const std::string& database_path,
                            const kernels::DeviceInfo& device, bool wait_for_device, bool writes_records,
                            const std::function<void(const std::string&)>& log) {
  const std::string device_id = device.fingerprint_id();
  const std::string path = tuner::device_lock_path(database_path, device_id);
  std::string holder;
  auto device_lock = tuner::FileLock::try_acquire(path, tuner::FileLock::Mode::kExclusive, who, &holder);
  if (!device_lock && !wait_for_device)
    throw std::runtime_error(who + ": another run (" + holder + ") is measuring on device " + device_id + " (" +
                             path + "); not started (--wait-lock waits for it)");
  if (!device_lock) {
    if (log) log(who + ": waiting for another run (" + holder + ") to finish measuring on device " + device_id);
    device_lock = tuner::FileLock::acquire(path, tuner::FileLock::Mode::kExclusive, who);
  }
  RunLocks locks{std::move(*device_lock), std::nullopt};
  // Shared with other runs writing to it; waits only while a prune holds it (seconds at most).
  if (writes_records)
    locks.database = tuner::FileLock::acquire(tuner::database_lock_path(database_path),
                                              tuner::FileLock::Mode::kShared, who);
  return locks;
}

}  // namespace optune::app
