#include "optune/tuner/jobs/device_lock.hpp"

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
namespace {

int open_lock_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // The lock lives beside the database: a folder that does not exist is the database path's
  // fault (bad input, as tune's own open of the database says), anything else the run's.
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
    throw std::invalid_argument("cannot open the lock file " + path + ": " + std::strerror(errno) +
                                " (the database's folder does not exist)");
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

std::string device_lock_path(const std::string& database_path, const std::string& device_id) {
  auto folder = std::filesystem::path(database_path).parent_path();
  return (folder / (".optune-device-" + device_id + ".lock")).string();
}

std::string database_lock_path(const std::string& database_path) {
  if (database_path.empty()) throw std::invalid_argument("the database path is empty");
  const std::filesystem::path database(database_path);
  return (database.parent_path() / (".optune-database-" + database.filename().string() + ".lock")).string();
}

}  // namespace optune::tuner
