#include "optune/tuner/jobs/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

namespace optune::tuner {
namespace {

int open_lock_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) {
    // Another user's run opens it too (the folder is the machine's); a umask must not keep it out.
    struct stat status {};
    if (::fstat(fd, &status) == 0 && status.st_uid == ::geteuid()) ::fchmod(fd, 0666);
    return fd;
  }
  // Made by another user whose umask kept it from us: flock(2) needs no write access.
  if (errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open the lock file " + path + ": " + std::strerror(errno));
  return fd;
}

std::string read_holder(int fd) {
  char text[128] = {};
  ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  return n > 0 ? std::string(text, static_cast<std::size_t>(n)) : "another process";
}

void write_holder(int fd, const std::string& who) {
  // Only for the message of a run refused; the lock holds without it.
  const std::string text = "pid " + std::to_string(::getpid()) + (who.empty() ? "" : ", " + who);
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
  }
}

int operation(FileLock::Mode mode) { return mode == FileLock::Mode::kExclusive ? LOCK_EX : LOCK_SH; }

}  // namespace

std::optional<FileLock> FileLock::try_acquire(const std::string& path, Mode mode, const std::string& who,
                                              std::string* holder) {
  int fd = open_lock_file(path);
  if (::flock(fd, operation(mode) | LOCK_NB) != 0) {
    const int error = errno;
    if (holder) *holder = read_holder(fd);
    ::close(fd);
    if (error == EWOULDBLOCK) return std::nullopt;
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(error));
  }
  write_holder(fd, who);
  return FileLock(fd);
}

FileLock FileLock::acquire(const std::string& path, Mode mode, const std::string& who) {
  int fd = open_lock_file(path);
  while (::flock(fd, operation(mode)) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(error));
  }
  write_holder(fd, who);
  return FileLock(fd);
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  // Closing the descriptor releases the flock; the file stays, to be locked again next time.
  if (fd_ >= 0) ::close(fd_);
}

std::string device_lock_path(const std::string& lock_dir, const std::string& device_id) {
  return (std::filesystem::path(lock_dir) / ("device-" + device_id + ".lock")).string();
}

std::string database_lock_path(const std::string& lock_dir, const std::string& database_path) {
  if (database_path.empty()) throw std::invalid_argument("the database path is empty");
  // The file's identity, not its name: prune through a symlink or a hard link must meet the lock
  // of the run writing through another name (issue 40, item 1).
  struct stat status {};
  if (::stat(database_path.c_str(), &status) != 0)
    throw std::invalid_argument("cannot lock the database " + database_path + ": " + std::strerror(errno));
  return (std::filesystem::path(lock_dir) / ("database-" + std::to_string(status.st_dev) + "-" +
                                             std::to_string(status.st_ino) + ".lock"))
      .string();
}

void make_lock_dir(const std::string& lock_dir) {
  std::error_code error;
  if (std::filesystem::is_directory(lock_dir, error)) return;
  if (!std::filesystem::create_directories(lock_dir, error) && !std::filesystem::is_directory(lock_dir)) {
    throw std::runtime_error("cannot make the lock folder " + lock_dir + ": " + error.message());
  }
  // Only the maker can open it to all; a folder another user made is theirs to set.
  if (::chmod(lock_dir.c_str(), 01777) != 0 && errno != EPERM)
    throw std::runtime_error("cannot open the lock folder " + lock_dir + " to every user: " + std::strerror(errno));
}

}  // namespace optune::tuner
