#include "optune/kernels/kernel_file_template.hpp"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "optune/kernels/kernel_digest.hpp"

namespace optune::kernels {
namespace {

// A space of millions of configs whose first million are all invalid is rare; then the default is
// a valid config drawn from a fixed seed instead of the first in order.
constexpr std::uint64_t kMaxDefaultScan = 1'000'000;

}  // namespace

KernelFileBinding::KernelFileBinding(KernelSpec spec) : spec_(std::move(spec)), template_name_(kernel_template_name(spec_)) {}

bool KernelFileBinding::applies(const Workload& workload, const DeviceInfo& device) const {
  if (workload.op != Op::kKernel || workload.kernel().name != spec_.name || device.kind != spec_.backend) return false;
  const auto& extents = workload.kernel().extents;
  if (extents.size() != spec_.extents.size()) return false;
  for (std::size_t i = 0; i < extents.size(); ++i)
    if (extents[i].name != spec_.extents[i].name) return false;
  return true;
}

const KernelProblem& KernelFileBinding::problem(const Workload& workload, const DeviceInfo& device) const {
  if (workload.op != Op::kKernel || workload.kernel().name != spec_.name)
    throw std::invalid_argument(spec_.file.string() + ": the workload " + workload.key() + " is not kernel " +
                                spec_.name + "'s");
  const std::string key = workload.key() + " " + device.fingerprint_id();
  std::lock_guard lock(mutex_);
  auto found = problems_.find(key);
  if (found == problems_.end())
    found = problems_.emplace(key, std::make_unique<KernelProblem>(spec_, kernel_shape_text(workload.kernel()), device)).first;
  return *found->second;
}

Workload KernelFileBinding::workload(std::string_view shape, const DeviceInfo& device) const {
  const KernelProblem bound(spec_, shape, device);
  const double work = bound.flops() > 0 ? bound.flops() : bound.bytes() > 0 ? bound.bytes() : 1e9;
  return kernel_workload(spec_.name, bound.extents(), work);
}

std::string KernelFileBinding::throughput_unit(const Workload& workload, const DeviceInfo& device) const {
  const KernelProblem& bound = problem(workload, device);
  return bound.flops() > 0 ? "GFLOP/s" : bound.bytes() > 0 ? "GB/s" : "runs/s";
}

search_space::Config KernelFileBinding::first_valid(const search_space::ConfigSpace& space) const {
  const std::uint64_t scan = std::min(space.size(), kMaxDefaultScan);
  for (std::uint64_t index = 0; index < scan; ++index) {
    search_space::Config config = space.from_index(index);
    if (space.is_valid(config)) return config;
  }
  std::mt19937_64 rng(1);
  return space.sample_valid(rng);  // throws when the space has no valid config
}

std::string KernelFileBinding::build_options(const Workload& workload, const DeviceInfo& device,
                                             const search_space::Config& config) const {
  std::string text;
  for (const std::string& option : problem(workload, device).build_options(config))
    text += (text.empty() ? "" : " ") + option;
  return text;
}

std::string read_kernel_source(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path.string() + ": cannot read the kernel's source");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace optune::kernels
