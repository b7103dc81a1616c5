#include "optune/measure/subprocess.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace optune::measure {
namespace {

ExitStatus decode(int raw) {
  ExitStatus status;
  if (WIFEXITED(raw)) {
    status.exited = true;
    status.code = WEXITSTATUS(raw);
  } else if (WIFSIGNALED(raw)) {
    status.signaled = true;
    status.signal = WTERMSIG(raw);
  }
  return status;
}

// How often read_line looks whether the child is still there while it waits for a line.
constexpr int kLivenessCheckMilliseconds = 100;

int milliseconds_until(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
}

}  // namespace

std::string ExitStatus::describe() const {
  if (exited) return "exit code " + std::to_string(code);
  if (signaled) return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "unknown status";
}

Subprocess Subprocess::spawn(const std::vector<std::string>& argv, const Options& options) {
  int to_child[2] = {-1, -1};
  int from_child[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.pipe_stdio) {
    // A worker: requests in, responses out; its stderr stays ours so its diagnostics show.
    // Socket pairs rather than pipes: send() with MSG_NOSIGNAL reports a dead worker as an error
    // instead of raising SIGPIPE in the tuner.
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, to_child) != 0 ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, from_child) != 0)
      throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  } else {
    // A compiler: no input; stdout and stderr together in one file, read on failure.
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    const char* out = options.output_file.empty() ? "/dev/null" : options.output_file.c_str();
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  // Own process group, so a kill reaches whatever the child started (compiler drivers fork).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);

  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  Subprocess child;
  int error = posix_spawnp(&child.pid_, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (options.pipe_stdio) {
    close(to_child[0]);
    close(from_child[1]);
    child.stdin_fd_ = to_child[1];
    child.stdout_fd_ = from_child[0];
  }
  if (error != 0) {
    child.pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(error));
  }
  return child;
}

Subprocess::Subprocess(Subprocess&& other) noexcept { *this = std::move(other); }

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this == &other) return *this;
  if (pid_ > 0 && !status_) kill();
  close_pipes();
  pid_ = std::exchange(other.pid_, -1);
  stdin_fd_ = std::exchange(other.stdin_fd_, -1);
  stdout_fd_ = std::exchange(other.stdout_fd_, -1);
  buffer_ = std::move(other.buffer_);
  timed_out_ = other.timed_out_;
  status_ = std::exchange(other.status_, std::nullopt);
  stopped_ = other.stopped_;
  return *this;
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !status_) kill();
  close_pipes();
}

void Subprocess::close_pipes() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  if (stdout_fd_ >= 0) close(stdout_fd_);
  stdin_fd_ = stdout_fd_ = -1;
}

bool Subprocess::write_line(const std::string& line) {
  std::string data = line + "\n";
  std::size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::send(stdin_fd_, data.data() + written, data.size() - written, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> Subprocess::read_line(std::chrono::steady_clock::time_point deadline) {
  timed_out_ = false;
  for (;;) {
    auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    // In slices: a child that has ended is seen as such even while a process it left behind holds
    // its output open (no end of file comes then).
    pollfd fd{stdout_fd_, POLLIN, 0};
    int ready = ::poll(&fd, 1, std::min(milliseconds_until(deadline), kLivenessCheckMilliseconds));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (poll()) {  // ended: what it wrote before is in the pipe already
        pollfd written{stdout_fd_, POLLIN, 0};
        if (::poll(&written, 1, 0) > 0) continue;
        return std::nullopt;
      }
      if (std::chrono::steady_clock::now() < deadline) continue;
      timed_out_ = true;
      return std::nullopt;
    }
    char chunk[4096];
    ssize_t n = ::read(stdout_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::optional<ExitStatus> Subprocess::poll() {
  if (status_) return status_;
  int raw = 0;
  // Every change since the last call, stops and continues included, up to the end.
  while (!status_ && waitpid(pid_, &raw, WNOHANG | WUNTRACED | WCONTINUED) == pid_) {
    if (WIFSTOPPED(raw)) stopped_ = true;
    else if (WIFCONTINUED(raw)) stopped_ = false;
    else status_ = decode(raw);
  }
  return status_;
}

bool Subprocess::is_stopped() {
  return !poll() && stopped_;
}

std::optional<ExitStatus> Subprocess::wait_until(std::chrono::steady_clock::time_point deadline) {
  // Polling with a short sleep keeps this free of signal handlers (SIGCHLD would be global state).
  auto pause = std::chrono::milliseconds(1);
  while (!poll()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return status_;
}

ExitStatus Subprocess::kill() {
  if (auto done = poll()) return *done;
  ::kill(-pid_, SIGKILL);  // the whole process group
  ::kill(pid_, SIGKILL);
  int raw = 0;
  while (waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  status_ = decode(raw);
  return *status_;
}

}  // namespace optune::measure
