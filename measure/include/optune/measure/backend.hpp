// Backend: one kind of device optune measures on (the CPU, OpenCL devices), host side: its target
// syntax, the devices of this machine, its templates and the builder of its candidates. Each
// backend is a folder under backends/ listed once in backends/src/registry.cpp, and nothing outside
// those folders names one. Its worker side (loading and running a candidate) is worker_backend.hpp.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/target.hpp"
#include "optune/measure/builder.hpp"
#include "optune/measure/worker_backend.hpp"

namespace optune::measure {

// What building candidates may need from the installation and the command line; each backend
// takes what it uses.
struct BuildSettings {
  std::string compiler = "c++";                      // of C++ candidates (a cross target's description names its own)
  int jobs = 0;                                      // parallel compiles; 0: all cores
  double compile_timeout = 120;                      // seconds per compile
  // By backend name: the folder of its own kernel sources or headers (Backend::kernel_sources()).
  std::map<std::string, std::string, std::less<>> kernel_source_dirs;
  std::vector<std::string> target_description_dirs;  // configs/targets/*.toml, first match wins
  std::string bin_dir;            // optune's executables (optune-worker's folder): a backend's helpers
  std::string program_cache_dir;  // where compiled device programs may be kept; "" none

  // The backend's folder; "" when it has none.
  std::string kernel_sources_of(std::string_view backend) const {
    const auto found = kernel_source_dirs.find(backend);
    return found == kernel_source_dirs.end() ? std::string() : found->second;
  }
};

// Where a backend's own kernel sources or headers are, which its builder compiles candidates
// from: the source tree for a build, a folder below the prefix for an installation.
struct KernelSourceDir {
  std::string in_source_tree;  // absolute: compiled in by the backend's CMakeLists
  std::string installed;       // relative to the installation's prefix: "include", "share/optune/opencl"
  std::string marker;          // a file below `installed` that shows the folder is optune's: "gemm.cl"
};

// A device of this machine and the target that names it.
struct TargetDevice {
  kernels::Target target;
  kernels::DeviceInfo device;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;  // the first word of its targets: "cpu"
  virtual std::string target_forms() const = 0;  // for help texts and errors: "cpu, cpu:<triple>"
  // The canonical form of a spec (what follows "<name>:"; "" for none). Throws
  // std::invalid_argument "target: ..." when the backend cannot read it.
  virtual std::string canonical_spec(std::string_view spec) const = 0;
  // False when the target's candidates run only on a remote device (a cross-compiled CPU).
  virtual bool runs_here(const kernels::Target& /*target*/) const { return true; }
  // Whether one tune may measure on several of its devices at once (`<name>:all`, `<name>:0,1`):
  // devices that share neither the host's cores nor one another's time, such as GPUs.
  virtual bool measures_devices_at_once() const { return false; }
  // The shortest timed repeat unless the user sets one (--min-repeat-ms): long enough that the
  // timer's resolution and the host's jitter vanish in a repeat. Host timers: 40 ms.
  virtual double default_min_repeat_ms() const { return 40; }
  // The shortest repeat of a comparison (the finalists', whose figures a run reports) unless the
  // user sets one: where the device's clock falls under a sustained load, long enough to time it
  // as peers timed in sustained batches are. By default the same as every repeat.
  virtual double comparison_min_repeat_ms() const { return default_min_repeat_ms(); }

  // This machine's devices of the backend (none when it has no such device).
  virtual std::vector<TargetDevice> devices() const = 0;
  // The device a target names on this machine; throws std::invalid_argument naming the target
  // and the devices there are.
  virtual kernels::DeviceInfo device(const kernels::Target& target) const = 0;
  // What `optune devices` prints about a device beyond its name and id: one line.
  virtual std::string details(const kernels::DeviceInfo& device) const = 0;

  virtual std::vector<const kernels::KernelTemplate*> templates() const = 0;
  // The kernel-file format's rules for this backend (limits, reserved words, launch model,
  // source extensions); nullptr: it takes no kernel files.
  virtual const kernels::KernelFileTraits* kernel_file_traits() const { return nullptr; }
  // Its own kernel sources or headers; nullopt: it has none.
  virtual std::optional<KernelSourceDir> kernel_sources() const { return std::nullopt; }
  // A user's kernel file of this backend as a template (kernels/kernel_file_template.hpp).
  virtual std::unique_ptr<kernels::KernelTemplate> kernel_file_template(kernels::KernelSpec spec) const = 0;
  // Throws std::invalid_argument when the settings do not serve the target (e.g. a cross target
  // without a description).
  virtual std::unique_ptr<Builder> make_builder(const kernels::Target& target,
                                                const BuildSettings& settings) const = 0;
  // Its side of optune-worker.
  virtual std::unique_ptr<WorkerBackend> make_worker() const = 0;
};

}  // namespace optune::measure
