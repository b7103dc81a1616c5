// The locks that keep optune's runs apart, each an flock(2) on a file in one folder shared by the
// whole machine (app::machine_lock_dir: /run/lock/optune, else /tmp/optune-locks); the kernel
// releases one when its holder exits, even by SIGKILL, so a killed run never leaves a stale lock
// behind. The file holds the holder's words ("pid 1234, tune"), for the message of a run refused.
//   - The device lock (exclusive), named after the device's fingerprint id: one run measures on a
//     device at a time, whatever database it writes (timings taken beside another run's are
//     disturbed). Every command that measures takes it: tune, regress, job run.
//   - The database lock, named after the database file's identity (its device and inode, so that
//     a symlink or a hard link of the file is the same database): a run that measures into a
//     database holds it shared for the whole run; prune takes it exclusively and refuses while any
//     run holds it (deleting records under a running tuner loses its default and its finalists).
#pragma once

#include <optional>
#include <string>

namespace optune::tuner {

class FileLock {
 public:
  enum class Mode { kExclusive, kShared };
  // Takes the lock without waiting; nullopt when another process holds it in a conflicting mode
  // (`holder` then says who, e.g. "pid 1234, job nightly"). `who` is written for the next one
  // refused. Throws std::runtime_error when the lock file cannot be opened.
  static std::optional<FileLock> try_acquire(const std::string& path, Mode mode, const std::string& who,
                                             std::string* holder = nullptr);
  // Waits until it is free; throws as try_acquire.
  static FileLock acquire(const std::string& path, Mode mode, const std::string& who);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// "<lock folder>/device-<id>.lock"
std::string device_lock_path(const std::string& lock_dir, const std::string& device_id);
// "<lock folder>/database-<device>-<inode>.lock" of the file `database_path` names (through any
// symlink). The file must exist (open the database first); throws std::invalid_argument when it
// does not.
std::string database_lock_path(const std::string& lock_dir, const std::string& database_path);
// Makes the lock folder where it is missing, open to every user with the sticky bit (mode 1777, as
// /tmp): runs of different users on one machine must see each other's locks. Throws
// std::runtime_error when it cannot be made.
void make_lock_dir(const std::string& lock_dir);

}  // namespace optune::tuner
