// optune-worker: the isolated process in which LocalRunner (and later the RPC server) loads and
// times candidates. It speaks the line-based JSON protocol of worker_protocol.hpp on stdio.
#include <iostream>

#include "optune/measure/worker_protocol.hpp"

int main() {
  std::ios::sync_with_stdio(false);
  return optune::measure::run_worker_loop(std::cin, std::cout);
}
