// Processes a test starts to load this machine's cores, each spinning until the object is gone:
// what a build or a CPU hog beside a tuning run does, made on purpose.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace optune::test_support {

class BusyProcesses {
 public:
  // One spinning process per core by default.
  explicit BusyProcesses(unsigned count = std::max(1u, std::thread::hardware_concurrency())) {
    for (unsigned i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        for (;;) asm volatile("" ::: "memory");  // spins; the barrier keeps the loop
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  BusyProcesses(const BusyProcesses&) = delete;
  BusyProcesses& operator=(const BusyProcesses&) = delete;
  ~BusyProcesses() {
    for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace optune::test_support
