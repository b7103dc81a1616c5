// What the kernel-file format (kernel_file.hpp) asks of a backend, so that the parser and
// kernel_problem.hpp name no backend: the limits a file's expressions may name, the words its
// language reserves, how its entry is started and named, and the source extensions it compiles. Each backend
// that takes kernel files defines one KernelFileTraits (backends/<name>/src/kernel_file_traits.cpp);
// the registry hands the parser the build's list as a KernelFileBackends.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/device_info.hpp"

namespace optune::kernels {

// How a kernel file's entry is started.
enum class LaunchModel {
  kCall,     // called once on the host (cpu): [launch] is refused, a reference has no launch
  kNDRange,  // over an NDRange: [launch] global and local, local divides global (OpenCL 1.2)
  // Over a grid of thread blocks, in Kernel Tuner's (and CUDA's) terms: [launch] grid (blocks),
  // block (threads per block; absent, the knobs block_size_x/_y/_z) and optional shared_memory
  // (bytes of dynamic shared memory). The grid counts blocks, so nothing need divide anything.
  kGridBlock,
};

// A device limit a kernel file's expressions may name; 0 where the device does not report it.
struct DeviceLimit {
  std::string_view name;                // an expression identifier: "max_work_group_size"
  double (*read)(const DeviceInfo&);
};

// What a launch's work-group (an NDRange's) or block (a grid's) is held to (0: unknown, not checked).
struct WorkGroupLimits {
  double max_size = 0;                                // work-items, or threads per block
  std::array<double, 3> max_per_dimension{0, 0, 0};   // work-items, or threads, per dimension
  double max_shared_memory = 0;                       // kGridBlock: bytes of dynamic shared memory a block may ask for
};

// How `optune apply-best --kernel`'s header (tuner/src/results/kernel_header.cpp) describes a
// table of the backend's kernels; the launch's members follow from the launch model.
struct KernelHeaderForm {
  std::string_view device_name_note;    // what names the device: " (CL_DEVICE_NAME)"; "" none
  std::string_view build_options_note;  // who reads the build options: "clBuildProgram's options"
};

struct KernelFileTraits {
  std::string_view backend;                       // what `backend = "..."` names
  std::vector<std::string_view> source_extensions;  // the first is where Python writes source text
  std::vector<std::string_view> reserved_words;   // the language's beyond C++'s keywords
  std::vector<DeviceLimit> device_limits;         // in the order expressions see them
  LaunchModel launch = LaunchModel::kCall;
  WorkGroupLimits (*work_group_limits)(const DeviceInfo&) = nullptr;  // kNDRange, kGridBlock
  // Whether `entry` and `check.reference` may name a template instance, "matmul<float, TILE>"
  // (C++ kernels compiled by name, as NVRTC's name expressions and Kernel Tuner's kernel_name);
  // knob and extent names among its arguments take the config's values (KernelProblem::entry).
  bool template_entries = false;
  KernelHeaderForm header;

  std::vector<std::string> limit_names() const;
  std::vector<double> limit_values(const DeviceInfo& device) const;  // in limit_names()' order
  bool has_limit(std::string_view name) const;
  bool reserves(std::string_view word) const;
};

// The backends kernel files may name in this build (backends::kernel_file_backends()).
class KernelFileBackends {
 public:
  explicit KernelFileBackends(std::vector<const KernelFileTraits*> traits) : traits_(std::move(traits)) {}
  const KernelFileTraits* find(std::string_view backend) const;  // nullptr if none
  std::string names() const;                                     // "cpu | opencl"
  const std::vector<const KernelFileTraits*>& all() const { return traits_; }

 private:
  std::vector<const KernelFileTraits*> traits_;
};

}  // namespace optune::kernels
