// What a run that measures holds for its whole length (tuner/device_lock.hpp): the device's lock,
// so two runs on this machine never time candidates on one device at once, whatever databases
// they write, and for a run that writes records a shared hold on its database (by the file's
// identity), which keeps `prune` away. Where the database is on a PostgreSQL server, both are also
// held there (db/server_lock.hpp): the device's, named by its id and this host, keeps apart runs
// started anywhere that share the database; the database's is the server's own.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "optune/db/server_lock.hpp"
#include "optune/kernels/device_info.hpp"
#include "optune/tuner/jobs/device_lock.hpp"

namespace optune::app {

// The machine's folder of optune's locks: `configured` where a front end was given one
// (OPTUNE_LOCK_DIR), else /run/lock/optune where /run/lock is open to every user (sticky and
// world-writable, as on Debian and Ubuntu), else /tmp/optune-locks. The choice depends on the
// folders alone, not on who asks, so every user's runs agree on it.
std::string machine_lock_dir(const std::string& configured = "");

// A hold on a database: a flock of the file's identity, or a lock on its server.
struct DatabaseHold {
  std::optional<tuner::FileLock> file;
  std::optional<db::ServerLock> server;
};

struct RunLocks {
  tuner::FileLock device;
  std::optional<db::ServerLock> server_device;  // a server's database: the device's lock there too
  std::optional<DatabaseHold> database;
};

// `who` names the run in the lock file and in messages ("tune", "job nightly"). When another run
// measures on the device: with `wait_for_device`, a line to `log` and a wait; without, a
// std::runtime_error naming that run (exit code 1: the input is fine, the device is busy). The
// database must exist by then (open it first: its lock is named after the file's identity).
RunLocks lock_for_measuring(const std::string& who, const std::string& lock_dir, const std::string& database_path,
                            const kernels::DeviceInfo& device, bool wait_for_device, bool writes_records,
                            const std::function<void(const std::string&)>& log = nullptr);

// prune's hold: the database locked exclusively, without waiting; nullopt while a run holds it
// (`holder` then says which).
std::optional<DatabaseHold> lock_database_exclusively(const std::string& who, const std::string& lock_dir,
                                                         const std::string& database_path, std::string& holder);

}  // namespace optune::app
