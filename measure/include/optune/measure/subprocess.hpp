// Subprocess: a child process we own (RAII: killed and reaped on destruction), started with
// posix_spawn, with an optional line-based pipe pair for request/response workers and explicit
// deadlines on every wait, so a hung child never hangs the tuner.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace optune::measure {

// How a child ended.
struct ExitStatus {
  bool exited = false;    // normal exit; `code` is valid
  int code = 0;
  bool signaled = false;  // killed by a signal; `signal` is valid
  int signal = 0;
  std::string describe() const;  // "exit code 1", "signal 11 (Segmentation fault)"
};

class Subprocess {
 public:
  struct Options {
    bool pipe_stdio = false;   // stdin/stdout become pipes for write_line/read_line
    std::string output_file;   // else stdout and stderr go to this file ("" = /dev/null)
  };

  // Throws std::runtime_error when the program cannot be started.
  static Subprocess spawn(const std::vector<std::string>& argv, const Options& options);
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // False when the child has closed its stdin (it died).
  bool write_line(const std::string& line);
  // A line from the child's stdout, or nullopt on end of file, once the child has ended (a
  // process it started may hold its stdout open after it), or when the deadline passes
  // (timed_out() tells which).
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline);
  bool timed_out() const { return timed_out_; }

  // Exit status once the child has ended, else nullopt (non-blocking).
  std::optional<ExitStatus> poll();
  // Whether the child is stopped (SIGSTOP, SIGTSTP) and not continued since: it answers nothing.
  bool is_stopped();
  // Waits until the deadline; nullopt if still running then.
  std::optional<ExitStatus> wait_until(std::chrono::steady_clock::time_point deadline);
  // SIGKILL and reap.
  ExitStatus kill();

 private:
  Subprocess() = default;
  void close_pipes();
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  bool timed_out_ = false;
  bool stopped_ = false;
  std::optional<ExitStatus> status_;
};

}  // namespace optune::measure
