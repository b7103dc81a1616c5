// Ctrl-C and SIGTERM for the commands that measure for long (tune, job run): the first signal asks
// the run to stop after the batch in flight, which is recorded; a second one stops it at once.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include <signal.h>

namespace optune::cli {

// While alive, SIGINT and SIGTERM set stop_requested() (the run reads it between batches); a second
// one calls `stop_now` with its number and then ends the process by that signal, as it would have
// died without a handler. A handler may not write a log (stdio is not async-signal-safe), so it
// passes the second signal through a pipe to a thread of ours, which calls `stop_now`.
class StopOnSignals {
 public:
  explicit StopOnSignals(std::function<void(int)> stop_now);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // Set by the first signal: what the run polls.
  static const std::atomic<bool>& stop_requested();
  static int first_signal();  // its number; 0 while none came

 private:
  void watch();
  std::function<void(int)> stop_now_;
  int pipe_[2] = {-1, -1};
  std::thread watcher_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace optune::cli
