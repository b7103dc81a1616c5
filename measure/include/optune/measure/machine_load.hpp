// How busy the machine was while a candidate ran: the share of all cores' CPU time that processes
// other than the measuring one (the worker) and this one took, read from Linux's /proc before and
// after. A record taken while a build, a browser or another tuner ran beside it carries that
// share, so that it can be told from one taken on a quiet machine (db::TuningRecord::is_noisy).
// On a GPU the host's share is still what is cheaply known: a busy host delays launches and copies.
#pragma once

#include <sys/types.h>

#include <optional>

namespace optune::measure {

class LoadWindow {
 public:
  // Starts a window over the measurement that `measuring_pid` (the worker) makes.
  static LoadWindow open(pid_t measuring_pid);
  // Other processes' share of the machine's CPU time since open(), in [0, 1]; nullopt where /proc
  // cannot be read (not Linux), the measuring process has gone, or no clock tick passed.
  std::optional<double> close() const;

 private:
  struct Ticks {
    double busy = 0;   // every core's non-idle time
    double total = 0;  // every core's time, idle included
  };
  static std::optional<Ticks> machine_ticks();
  static std::optional<double> process_ticks(pid_t pid);  // user + system time of all its threads

  pid_t measuring_pid_ = -1;
  std::optional<Ticks> machine_;
  std::optional<double> measuring_;
  std::optional<double> own_;
};

}  // namespace optune::measure
