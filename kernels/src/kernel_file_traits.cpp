#include "optune/kernels/kernel_file_traits.hpp"

#include <algorithm>

namespace optune::kernels {

std::vector<std::string> KernelFileTraits::limit_names() const {
  std::vector<std::string> names;
  for (const DeviceLimit& limit : device_limits) names.emplace_back(limit.name);
  return names;
}

std::vector<double> KernelFileTraits::limit_values(const DeviceInfo& device) const {
  std::vector<double> values;
  for (const DeviceLimit& limit : device_limits) values.push_back(limit.read(device));
  return values;
}

bool KernelFileTraits::has_limit(std::string_view name) const {
  return std::any_of(device_limits.begin(), device_limits.end(), [&](const DeviceLimit& limit) { return limit.name == name; });
}

bool KernelFileTraits::reserves(std::string_view word) const {
  return std::find(reserved_words.begin(), reserved_words.end(), word) != reserved_words.end();
}

const KernelFileTraits* KernelFileBackends::find(std::string_view backend) const {
  const auto found = std::find_if(traits_.begin(), traits_.end(), [&](const KernelFileTraits* traits) { return traits->backend == backend; });
  return found == traits_.end() ? nullptr : *found;
}

std::string KernelFileBackends::names() const {
  std::string names;
  for (const KernelFileTraits* traits : traits_) names += (names.empty() ? "" : " | ") + std::string(traits->backend);
  return names;
}

}  // namespace optune::kernels
