// DeviceLock: keeps two jobs from measuring on one device at once (their timings would disturb
// each other). An exclusive flock(2) on a lock file named after the device fingerprint id, in
// the database's folder; the kernel releases it when the holder exits, even by SIGKILL, so a
// killed job never leaves a stale lock behind. The file holds the holder's pid, for the message.
#pragma once

#include <optional>
#include <string>

namespace optune::tuner {

class DeviceLock {
 public:
  // The lock file of a device for a database: "<database folder>/.optune-device-<id>.lock".
  static std::string path_for(const std::string& database_path, const std::string& device_id);
  // Takes the lock without waiting; nullopt when another process holds it (`holder` then says
  // who, e.g. "pid 1234"). Throws std::runtime_error when the lock file cannot be opened.
  static std::optional<DeviceLock> try_acquire(const std::string& path, std::string* holder = nullptr);

  DeviceLock(DeviceLock&& other) noexcept;
  DeviceLock& operator=(DeviceLock&& other) noexcept;
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;
  ~DeviceLock();

 private:
  explicit DeviceLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace optune::tuner
