#include "optune/app/run_locks.hpp"

#include <sys/stat.h>

#include "optune/db/database.hpp"

namespace optune::app {
namespace {

// Sticky and writable by all: a folder where any user may make files that only they can remove.
bool is_open_to_every_user(const char* folder) {
  struct stat status {};
  return ::stat(folder, &status) == 0 && S_ISDIR(status.st_mode) && (status.st_mode & S_ISVTX) &&
         (status.st_mode & S_IWOTH);
}

// The device's lock on the database's server: one run measures on it, wherever the runs start. A
// device is named by its fingerprint id and the host it is on (two machines of one model have
// the same id and are two devices).
db::ServerLock lock_device_on_server(const std::string& who, const std::string& uri, const std::string& device_id,
                                     bool wait_for_device, const std::function<void(const std::string&)>& log) {
  const std::string name = "device " + device_id + " on " + db::host_name();
  std::string holder;
  auto lock = db::ServerLock::try_acquire(uri, name, db::ServerLock::Mode::kExclusive, who, &holder);
  if (lock) return std::move(*lock);
  if (!wait_for_device)
    throw std::runtime_error(who + ": another run (" + holder + ") is measuring on device " + device_id +
                             " (locked on the database server); not started (--wait-lock waits for it)");
  if (log) log(who + ": waiting for another run (" + holder + ") to finish measuring on device " + device_id);
  return db::ServerLock::acquire(uri, name, db::ServerLock::Mode::kExclusive, who);
}

constexpr const char* kDatabaseLockName = "database";

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
  RunLocks locks{std::move(*device_lock), std::nullopt, std::nullopt};
  const bool is_on_server = db::is_server_uri(database_path);
  if (is_on_server) locks.server_device = lock_device_on_server(who, database_path, device_id, wait_for_device, log);
  // Shared with other runs writing to it; waits only while a prune holds it (seconds at most).
  if (writes_records) {
    locks.database.emplace();
    if (is_on_server)
      locks.database->server =
          db::ServerLock::acquire(database_path, kDatabaseLockName, db::ServerLock::Mode::kShared, who);
    else
      locks.database->file = tuner::FileLock::acquire(tuner::database_lock_path(lock_dir, database_path),
                                                      tuner::FileLock::Mode::kShared, who);
  }
  return locks;
}

std::optional<DatabaseHold> lock_database_exclusively(const std::string& who, const std::string& lock_dir,
                                                      const std::string& database_path, std::string& holder) {
  DatabaseHold hold;
  if (db::is_server_uri(database_path)) {
    hold.server = db::ServerLock::try_acquire(database_path, kDatabaseLockName, db::ServerLock::Mode::kExclusive,
                                              who, &holder);
    if (!hold.server) return std::nullopt;
    return hold;
  }
  tuner::make_lock_dir(lock_dir);
  hold.file = tuner::FileLock::try_acquire(tuner::database_lock_path(lock_dir, database_path),
                                           tuner::FileLock::Mode::kExclusive, who, &holder);
  if (!hold.file) return std::nullopt;
  return hold;
}

}  // namespace optune::app
