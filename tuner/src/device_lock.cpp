#include "optune/tuner/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

namespace optune::tuner {

std::string DeviceLock::path_for(const std::string& database_path, const std::string& device_id) {
  auto folder = std::filesystem::path(database_path).parent_path();
  return (folder / (".optune-device-" + device_id + ".lock")).string();
}

std::optional<DeviceLock> DeviceLock::try_acquire(const std::string& path, std::string* holder) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open the device lock " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (holder) {
      char text[32] = {};
      ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
      *holder = n > 0 ? "pid " + std::string(text, static_cast<std::size_t>(n)) : "another process";
    }
    ::close(fd);
    if (error == EWOULDBLOCK) return std::nullopt;
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(error));
  }
  // Ours now: record who holds it.
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message of a refused job; the lock holds without it.
  }
  return DeviceLock(fd);
}

DeviceLock::DeviceLock(DeviceLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

DeviceLock& DeviceLock::operator=(DeviceLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DeviceLock::~DeviceLock() {
  // Closing the descriptor releases the flock; the file stays, to be locked again next time.
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace optune::tuner
