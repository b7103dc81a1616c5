// The locks that keep optune's runs apart, each an flock(2) on a file in the database's folder;
// the kernel releases one when its holder exits, even by SIGKILL, so a killed run never leaves a
// stale lock behind. The file holds the holder's words ("pid 1234, tune"), for the message of a
// run refused.
//   - The device lock (exclusive): one run measures on a device at a time (timings taken beside
//     another run's are disturbed). Every command that measures takes it: tune, regress, job run.
//   - The database lock: a run that measures into a database holds it shared for the whole run;
//     prune takes it exclusively and refuses while any run holds it (deleting records under a
//     running tuner loses its default and its finalists mid-run).
// Both are per database folder: runs whose databases live in different folders do not see each
// other's locks.
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

// "<database folder>/.optune-device-<id>.lock"
std::string device_lock_path(const std::string& database_path, const std::string& device_id);
// "<database folder>/.optune-database-<file name>.lock"
std::string database_lock_path(const std::string& database_path);

}  // namespace optune::tuner
