#include "stop_signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <stdexcept>

namespace optune::cli {
namespace {

// Set by the signal handler, read between batches: the only state a handler may touch.
std::atomic<bool> stop_requested_flag{false};
volatile std::sig_atomic_t first_signal_number = 0;
int second_signal_pipe = -1;  // the write end of StopOnSignals' pipe while it lives

void request_stop(int signal) {
  if (stop_requested_flag.exchange(true)) {
    // The second: its number to the thread that ends the run (write(2) is async-signal-safe).
    const unsigned char number = static_cast<unsigned char>(signal);
    [[maybe_unused]] auto written = ::write(second_signal_pipe, &number, 1);
    return;
  }
  first_signal_number = signal;
}

}  // namespace

StopOnSignals::StopOnSignals(std::function<void(int)> stop_now) : stop_now_(std::move(stop_now)) {
  if (::pipe2(pipe_, O_CLOEXEC) != 0) throw std::runtime_error("cannot make a pipe for the run's signals");
  second_signal_pipe = pipe_[1];
  watcher_ = std::thread([this] { watch(); });
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

StopOnSignals::~StopOnSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  const unsigned char finished = 0;
  [[maybe_unused]] auto written = ::write(pipe_[1], &finished, 1);
  watcher_.join();
  second_signal_pipe = -1;
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

const std::atomic<bool>& StopOnSignals::stop_requested() { return stop_requested_flag; }

int StopOnSignals::first_signal() { return static_cast<int>(first_signal_number); }

void StopOnSignals::watch() {
  unsigned char number = 0;
  while (::read(pipe_[0], &number, 1) < 0 && errno == EINTR) {
  }
  if (number == 0) return;  // the run ended first
  stop_now_(number);
  std::fflush(nullptr);
  std::signal(number, SIG_DFL);
  std::raise(number);
}

}  // namespace optune::cli
