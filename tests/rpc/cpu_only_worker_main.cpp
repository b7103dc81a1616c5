// The optune-worker that tests/rpc cross-builds for aarch64 (a device without OpenCL, measured
// under qemu): the CPU backend's worker side alone.
#include <iostream>

#include "optune/backends/cpu/backend.hpp"
#include "optune/measure/worker_loop.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  std::vector<std::unique_ptr<optune::measure::WorkerBackend>> backends;
  backends.push_back(optune::backends::make_cpu_worker());
  return optune::measure::run_worker_loop(std::cin, std::cout, std::move(backends));
}
