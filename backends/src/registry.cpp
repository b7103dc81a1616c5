// What the rest of optune asks of the backends, over the list backends/CMakeLists.txt generates
// (backend_list.cpp): no backend is named here.
#include "optune/backends/registry.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

namespace optune::backends {

const std::vector<const measure::Backend*>& built_backends();  // backend_list.cpp, generated

const std::vector<const measure::Backend*>& all_backends() { return built_backends(); }

std::vector<std::unique_ptr<measure::WorkerBackend>> make_workers() {
  std::vector<std::unique_ptr<measure::WorkerBackend>> workers;
  for (const auto* backend : all_backends()) workers.push_back(backend->make_worker());
  return workers;
}

std::string target_forms() {
  std::string forms;
  for (const auto* backend : all_backends()) forms += (forms.empty() ? "" : ", ") + backend->target_forms();
  return forms;
}

namespace {

bool computes(const kernels::KernelTemplate& kernel_template, kernels::DataType dtype) {
  if (kernel_template.op() == kernels::Op::kKernel) return true;
  const auto dtypes = kernel_template.dtypes();
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

const measure::Backend* backend_named(std::string_view name) {
  for (const auto* backend : all_backends())
    if (backend->name() == name) return backend;
  return nullptr;
}

}  // namespace

const measure::Backend& find_backend(std::string_view name) {
  if (const auto* backend = backend_named(name)) return *backend;
  std::string names;
  for (const auto* backend : all_backends()) names += (names.empty() ? "" : ", ") + std::string(backend->name());
  throw std::invalid_argument("no backend '" + std::string(name) + "' in this build of optune (backends: " + names + ")");
}

kernels::Target parse_target(std::string_view text) {
  kernels::Target target;
  try {
    target = kernels::split_target(text);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("target: unknown target '" + std::string(text) + "' (expected " + target_forms() + ")");
  }
  const measure::Backend* backend = backend_named(target.backend);
  if (!backend)
    throw std::invalid_argument("target: unknown target '" + std::string(text) + "' (expected " + target_forms() + ")");
  target.spec = backend->canonical_spec(target.spec);
  return target;
}

std::vector<kernels::Target> parse_targets(std::string_view text) {
  const kernels::Target whole = [&] {
    try {
      return kernels::split_target(text);
    } catch (const std::invalid_argument&) {
      return kernels::Target{std::string(text), ""};  // parse_target says what is wrong with it
    }
  }();
  if (whole.spec != "all" && whole.spec.find(',') == std::string::npos) return {parse_target(text)};
  const measure::Backend* backend = backend_named(whole.backend);
  if (!backend || !backend->measures_devices_at_once()) {
    std::string those;
    for (const auto* each : all_backends())
      if (each->measures_devices_at_once()) those += std::string(those.empty() ? "" : ", ") + std::string(each->name());
    throw std::invalid_argument("target " + std::string(text) + ": " +
                                (those.empty() ? std::string("no backend of this build measures on several devices at once")
                                               : "only " + those + " measures on several devices at once (" + those + ":all)"));
  }
  std::vector<kernels::Target> targets;
  if (whole.spec == "all") {
    for (const auto& device : backend->devices()) targets.push_back(device.target);
    if (targets.empty()) throw std::invalid_argument("target " + std::string(text) + ": no " + whole.backend + " device here");
    return targets;
  }
  std::string_view rest = whole.spec;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    if (entry.find_first_not_of(" \t") == std::string_view::npos)
      throw std::invalid_argument("target " + std::string(text) + ": an empty entry in the list");
    const auto target = parse_target(whole.backend + ":" + std::string(entry));
    if (std::find(targets.begin(), targets.end(), target) != targets.end())
      throw std::invalid_argument("target " + std::string(text) + ": " + target.str() + " is listed twice");
    targets.push_back(target);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return targets;
}

namespace {
std::atomic<std::size_t> detections{0};
}  // namespace

kernels::DeviceInfo find_device(const kernels::Target& target) {
  ++detections;
  return find_backend(target.backend).device(target);
}

std::size_t device_detections() { return detections.load(); }

std::vector<measure::TargetDevice> local_devices() {
  std::vector<measure::TargetDevice> devices;
  for (const auto* backend : all_backends())
    for (auto& device : backend->devices()) devices.push_back(std::move(device));
  return devices;
}

std::vector<const kernels::KernelTemplate*> all_templates() {
  std::vector<const kernels::KernelTemplate*> templates;
  for (const auto* backend : all_backends())
    for (const auto* kernel_template : backend->templates()) templates.push_back(kernel_template);
  return templates;
}

std::vector<const kernels::KernelTemplate*> templates_for(const kernels::Workload& workload, std::string_view backend,
                                                          const kernels::DeviceInfo& device) {
  std::vector<const kernels::KernelTemplate*> templates;
  for (const auto* candidate : all_templates())
    if (candidate->op() == workload.op && candidate->backend() == backend && computes(*candidate, workload.dtype) &&
        candidate->applies(workload, device))
      templates.push_back(candidate);
  std::stable_sort(templates.begin(), templates.end(),
                   [](const auto* a, const auto* b) { return a->priority() > b->priority(); });
  return templates;
}

std::vector<kernels::DataType> dtypes_of(kernels::Op op, std::string_view backend) {
  std::vector<kernels::DataType> dtypes;
  for (const auto* candidate : all_templates()) {
    if (candidate->op() != op || candidate->backend() != backend) continue;
    for (kernels::DataType dtype : candidate->dtypes())
      if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) dtypes.push_back(dtype);
  }
  std::sort(dtypes.begin(), dtypes.end());
  return dtypes;
}

void check_dtype(const kernels::Workload& workload, std::string_view backend) {
  if (workload.op == kernels::Op::kKernel) return;  // a kernel file's arguments carry their own
  const auto dtypes = dtypes_of(workload.op, backend);
  if (dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), workload.dtype) != dtypes.end()) return;
  std::string names;
  for (kernels::DataType dtype : dtypes) names += (names.empty() ? "" : ", ") + std::string(kernels::data_type_name(dtype));
  throw std::invalid_argument("dtype " + std::string(kernels::data_type_name(workload.dtype)) + ": " +
                              std::string(kernels::op_name(workload.op)) + " on " + std::string(backend) +
                              " runs " + names);
}

const kernels::KernelTemplate& default_template(const kernels::Workload& workload, std::string_view backend,
                                                const kernels::DeviceInfo& device) {
  const auto templates = templates_for(workload, backend, device);
  if (templates.empty()) check_dtype(workload, backend);
  if (templates.empty())
    throw std::invalid_argument("kernels: no template for op " + std::string(kernels::op_name(workload.op)) +
                                " on backend " + std::string(backend) + " applies to " + workload.key());
  return *templates.front();
}

const kernels::KernelTemplate& find_template(std::string_view name) {
  std::string names;
  for (const auto* candidate : all_templates()) {
    if (candidate->name() == name) return *candidate;
    names += (names.empty() ? "" : ", ") + candidate->name();
  }
  throw std::invalid_argument("kernels: no template '" + std::string(name) + "' (templates: " + names + ")");
}

const kernels::KernelTemplate& template_of_record(std::string_view template_name, const nlohmann::json& config) {
  for (const auto* candidate : all_templates())
    if (candidate->reads_record(template_name, config)) return *candidate;
  throw std::invalid_argument("unknown template '" + std::string(template_name) + "'");
}

const kernels::KernelFileBackends& kernel_file_backends() {
  static const kernels::KernelFileBackends backends = [] {
    std::vector<const kernels::KernelFileTraits*> traits;
    for (const auto* backend : all_backends())
      if (const auto* found = backend->kernel_file_traits()) traits.push_back(found);
    return kernels::KernelFileBackends(std::move(traits));
  }();
  return backends;
}

kernels::KernelSpec load_kernel_file(const std::filesystem::path& path) {
  return kernels::load_kernel_file(path, kernel_file_backends());
}

std::unique_ptr<kernels::KernelTemplate> kernel_file_template(const kernels::KernelSpec& spec) {
  const measure::Backend* backend = backend_named(spec.backend);
  if (!backend) {
    std::string names;
    for (const auto* known : all_backends()) names += (names.empty() ? "" : ", ") + std::string(known->name());
    throw std::invalid_argument(spec.file.string() + ": backend: this optune was built without backend '" +
                                spec.backend + "' (it has " + names + ")");
  }
  return backend->kernel_file_template(spec);
}

}  // namespace optune::backends
