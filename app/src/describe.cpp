#include "optune/app/describe.hpp"

#include <random>

#include "optune/app/bad_input.hpp"
#include "optune/app/tasks.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_file_template.hpp"
#include "optune/kernels/operator_catalog.hpp"

namespace optune::app {
namespace {

// Configs of a space this small are counted, not sampled; a larger one's share is estimated from
// this many uniform draws.
constexpr std::uint64_t kCountedSpace = 20000;
constexpr int kSamples = 20000;

// Share of valid configs: counted in a small space, else from uniform index samples (a large
// space is never enumerated).
double estimate_valid_share(const search_space::ConfigSpace& space) {
  if (space.size() <= kCountedSpace) {
    std::uint64_t valid = 0;
    for (std::uint64_t i = 0; i < space.size(); ++i) valid += space.is_valid(space.from_index(i));
    return static_cast<double>(valid) / static_cast<double>(space.size());
  }
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> index(0, space.size() - 1);
  int valid = 0;
  for (int i = 0; i < kSamples; ++i) valid += space.is_valid(space.from_index(index(rng)));
  return static_cast<double>(valid) / kSamples;
}

}  // namespace

nlohmann::json describe_space(const std::string& op, const std::string& shape, const std::string& target,
                              const std::string& kernel_file) {
  if (shape.empty() && kernel_file.empty()) throw BadInput("space: --shape is required");
  auto task = kernel_file.empty() ? make_task(op, shape, target) : make_kernel_task(kernel_file, shape, target);
  const auto& space = task->space;
  auto default_config = task->kernel_template->default_config(task->workload, task->device, space);
  return {
      {"workload", task->workload.key()},
      {"template", task->kernel_template->name()},
      {"target", task->target.str()},
      {"device", task->device.name},
      {"size", space.size()},
      {"valid_share_estimate", estimate_valid_share(space)},
      {"valid_share_counted", space.size() <= kCountedSpace},
      {"valid_share_samples", kSamples},
      {"knobs", space.describe()},
      {"default_config", space.to_json(default_config)},
  };
}

nlohmann::json describe_devices() {
  nlohmann::json all = nlohmann::json::array();
  auto add = [&](const kernels::DeviceInfo& info, const std::string& target) {
    all.push_back({{"target", target}, {"id", info.fingerprint_id()}, {"fingerprint", info.fingerprint()}});
  };
  for (const auto& [target, device] : backends::local_devices()) add(device, target.str());
  return all;
}

nlohmann::json list_backend_devices() {
  nlohmann::json all = nlohmann::json::array();
  for (const auto* backend : backends::all_backends()) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& [target, device] : backend->devices())
      devices.push_back({{"name", device.platform.empty() ? device.name : device.platform + " / " + device.name},
                         {"id", device.fingerprint_id()},
                         {"details", backend->details(device)}});
    all.push_back({{"backend", std::string(backend->name())}, {"devices", std::move(devices)}});
  }
  return all;
}

std::string throughput_unit(const measure::MeasureTask& task) {
  return kernels::throughput_unit(*task.kernel_template, task.workload, task.device);
}

std::string operator_names() { return kernels::operator_names(); }

std::string target_forms() { return backends::target_forms(); }

}  // namespace optune::app
