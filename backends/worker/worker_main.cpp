// optune-worker: the isolated process in which LocalRunner (and the RPC server through it) loads
// and times candidates, with every backend of this build. It speaks the line-based JSON messages
// of worker_messages.hpp over the stdin and stdout it was started with.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ext/stdio_filebuf.h>
#include <iostream>
#include <thread>

#include "optune/backends/registry.hpp"
#include "optune/measure/worker_loop.hpp"

namespace {

// Moves `fd` to a new descriptor for the worker's messages alone and points `fd` at `replacement`.
int take_private(int fd, int replacement) {
  const int kept = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (kept < 0 || dup2(replacement, fd) < 0) {
    std::perror("optune-worker: cannot set its message channel apart");
    std::_Exit(2);
  }
  return kept;
}

// A worker whose runner is gone (killed with SIGKILL, or a Python process ended by SIGTERM) would
// go on running a candidate that never returns, at full speed, for good: it exits once orphaned.
void exit_when_orphaned() {
  const pid_t runner = getppid();
  std::thread([runner] {
    while (getppid() == runner) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::_Exit(3);
  }).detach();
}

}  // namespace

int main() {
  exit_when_orphaned();
  // The messages travel on private descriptors: a candidate's printf (a user's kernel may print
  // while it is debugged) goes to the worker's stderr instead of into a reply, and a kernel that
  // reads stdin reads nothing instead of the next request.
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) {
    std::perror("optune-worker: /dev/null");
    return 2;
  }
  const int requests = take_private(STDIN_FILENO, null);
  const int replies = take_private(STDOUT_FILENO, STDERR_FILENO);
  __gnu_cxx::stdio_filebuf<char> in_buffer(requests, std::ios::in);
  __gnu_cxx::stdio_filebuf<char> out_buffer(replies, std::ios::out);
  std::istream in(&in_buffer);
  std::ostream out(&out_buffer);
  return optune::measure::run_worker_loop(in, out, optune::backends::make_workers());
}
