// Opening a shared library at run time (dlopen) and looking up its symbols: how optune reaches the
// CUDA driver and NVRTC without linking to them, so that it builds and runs where they are absent.
#pragma once

#include <string>

namespace optune::backends::cuda {

// A library opened with RTLD_NOW | RTLD_LOCAL, or the loader's reason why not. It is never closed:
// the driver and NVRTC keep threads and state that outlive any owner inside the process, and
// unloading them under live contexts crashes at exit.
struct SharedLibrary {
  void* handle = nullptr;
  std::string path;   // the file the loader picked, e.g. /usr/local/cuda/lib64/libnvrtc.so.13
  std::string error;  // dlerror()'s line when handle is null

  bool is_open() const { return handle != nullptr; }
  void* symbol(const char* name) const;  // nullptr when absent
};

// `name` as dlopen takes it: a soname searched on the loader's path, or a path.
SharedLibrary open_shared_library(const std::string& name);

}  // namespace optune::backends::cuda
