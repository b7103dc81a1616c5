#include "optune/app/run_locks.hpp"

#include <sys/stat.h>

namespace optune::app {
namespace {

// Sticky and writable by all: a folder where any user may make files that only they can remove.
bool is_open_to_every_user(const char* folder) {
  struct stat status {};
  return ::stat(folder, &status) == 0 && S_ISDIR(status.st_mode) && (status.st_mode & S_ISVTX) &&
         (status.st_mode & S_IWOTH);
}

}  // namespace

std::string machine_lock_dir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (is_open_to_every_user("/run/lock")) return "/run/lock/optune";
  return "/tmp/optune-locks";
}

RunLocks lock_for_measuring(const std::string& who, const std::string& lock_dir, const std::string& database_path,
                            const kernels::DeviceInfo& device, bool wait_for_device, bool writes_records,
                            const std::function<void(const std::string&)>& log) {
  tuner::make_lock_dir(lock_dir);
  const std::string device_id = device.fingerprint_id();
  const std::string path = tuner::device_lock_path(lock_dir, device_id);
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
    locks.database = tuner::FileLock::acquire(tuner::database_lock_path(lock_dir, database_path),
                                              tuner::FileLock::Mode::kShared, who);
  return locks;
}

std::optional<tuner::FileLock> lock_database_exclusively(const std::string& who, const std::string& lock_dir,
                                                         const std::string& database_path, std::string& holder) {
  tuner::make_lock_dir(lock_dir);
  return tuner::FileLock::try_acquire(tuner::database_lock_path(lock_dir, database_path),
                                      tuner::FileLock::Mode::kExclusive, who, &holder);
}

}  // namespace optune::app
