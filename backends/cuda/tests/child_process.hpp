// A command run through the shell for the CUDA tests (optune-nvrtc, optune-cuda-probe): its exit
// code and what it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace optune::backends::cuda::test_support {

struct Child {
  int status = -1;     // the exit code; -1 when a signal ended it
  std::string output;  // stdout, and stderr unless left out
};

inline Child run(const std::string& command, bool with_stderr = true) {
  Child child;
  FILE* pipe = popen((command + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) child.output.append(buffer, n);
  const int status = pclose(pipe);
  child.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return child;
}

}  // namespace optune::backends::cuda::test_support
