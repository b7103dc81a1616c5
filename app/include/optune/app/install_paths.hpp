// InstallPaths: where the files a measurement needs live: the worker executable, the kernel
// headers C++ candidates include, the device kernels' sources, the cross-compilation target
// descriptions and the cache of programs the worker compiles. The library never guesses them: each
// front end resolves them for its own layout (the command line beside its executable, the Python
// module beside its package) and passes them in.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace optune::app {

struct InstallPaths {
  std::string worker;                               // optune-worker
  // By backend name: its own kernel sources or headers (measure::BuildSettings::kernel_source_dirs).
  std::map<std::string, std::string, std::less<>> kernel_source_dirs;
  std::vector<std::string> target_description_dirs; // configs/targets/*.toml, first match wins
  std::string program_cache_dir;                     // "" : compiled programs are not cached
  // The machine's folder of run locks (run_locks.hpp's machine_lock_dir): one per machine, so
  // runs of every database and user see each other.
  std::string lock_dir;
};

// The paths of an installation whose executables are in `bin_dir` (<prefix>/bin, with
// <prefix>/include and <prefix>/share/optune), each falling back to this build's source tree
// where the installed file is missing (each backend says where its kernel sources are). `program_cache_dir` is passed through, and `lock_dir`
// ("": the machine's default) chosen by machine_lock_dir (front ends choose them: libraries read
// no environment).
InstallPaths install_paths_beside(const std::string& bin_dir, const std::string& program_cache_dir,
                                  const std::string& lock_dir = "");

}  // namespace optune::app
