// optune-worker: the isolated process in which LocalRunner (and the RPC server through it) loads
// and times candidates, with every backend of this build. It speaks the line-based JSON messages
// of worker_messages.hpp on stdio.
#include <iostream>

#include "optune/backends/registry.hpp"
#include "optune/measure/worker_loop.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  return optune::measure::run_worker_loop(std::cin, std::cout, optune::backends::make_workers());
}
