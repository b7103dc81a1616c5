#include "optune/measure/parallel_processes.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace optune::measure {

void ParallelProcesses::run(std::size_t count) const {
  using Clock = std::chrono::steady_clock;
  struct Running {
    std::size_t index;
    Subprocess process;
    Clock::time_point start;
  };
  const auto timeout = std::chrono::duration<double>(timeout_seconds);
  std::vector<Running> running;  // killed on the way out if start or finish throws
  std::size_t next = 0;
  while (next < count || !running.empty()) {
    while (next < count && running.size() < static_cast<std::size_t>(std::max(1, jobs))) {
      const std::size_t index = next++;
      const auto started = Clock::now();
      if (auto process = start(index)) running.push_back({index, std::move(*process), started});
    }
    for (auto it = running.begin(); it != running.end();) {
      auto status = it->process.poll();
      const auto elapsed = Clock::now() - it->start;
      if (status || elapsed > timeout) {
        if (!status) it->process.kill();
        Running ended = std::move(*it);
        it = running.erase(it);
        finish(ended.index, status, std::chrono::duration<double>(elapsed).count());
      } else {
        ++it;
      }
    }
    if (!running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace optune::measure
