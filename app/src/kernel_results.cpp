#include "optune/app/kernel_results.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "optune/app/bad_input.hpp"
#include "optune/app/tasks.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_digest.hpp"
#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/kernel_problem.hpp"
#include "optune/tuner/interop/kernel_tuner_cache.hpp"
#include "optune/tuner/replay/landscape_file.hpp"
#include "optune/tuner/search/record_check.hpp"

namespace optune::app {
namespace {

// A device known by name: its latest fingerprint in the database's records for the target, else
// this machine's device of that name, else the name alone (kind: the backend; limits 0, unknown).
kernels::DeviceInfo imported_device(const std::string& name, const kernels::Target& target,
                                    const std::string& database_path, std::string& source) {
  if (db::is_server_uri(database_path) || std::filesystem::exists(database_path)) {
    db::RecordFilter filter;
    filter.target = target.str();
    filter.device = name;
    std::optional<kernels::DeviceInfo> recorded;
    for (const auto& record : open_database(database_path, db::Database::Mode::kReadOnly).records(filter)) {
      if (record.device_fingerprint.value("name", "") != name || record.device_fingerprint.value("kind", "") != target.backend)
        continue;
      try {
        recorded = kernels::DeviceInfo::from_fingerprint(record.device_fingerprint);
      } catch (const std::invalid_argument&) {  // a forged fingerprint: not this device's
      }
    }
    if (recorded) {
      source = "the database";
      return *recorded;
    }
  }
  for (const auto& local : backends::local_devices()) {
    if (local.device.kind == target.backend && local.device.name == name) {
      source = "this machine";
      return local.device;
    }
  }
  source = "the name alone";
  kernels::DeviceInfo device;
  device.kind = target.backend;
  device.name = name;
  device.arch.clear();
  device.l1d_bytes = 0;
  device.l2_bytes = 0;
  return device;
}

std::string name_only_hint(const std::string& name, const std::string& source) {
  if (source != "the name alone") return "";
  return " (device '" + name + "' is known by its name only, its limits read 0: tune on it once, or import into the "
         "database that has its records)";
}

struct ExportScope {
  std::string workload_key;
  std::string target;
  kernels::DeviceInfo device;
};

// The one target and device whose records of the workload are exported.
ExportScope export_scope(const std::vector<db::TuningRecord>& records, const std::string& workload_key) {
  std::map<std::string, std::string> devices;  // id -> name
  std::set<std::string> targets;
  for (const auto& record : records) {
    devices.emplace(record.device_id, record.device_fingerprint.value("name", ""));
    targets.insert(record.target);
  }
  auto listed = [](const auto& items, auto describe) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ", ") + describe(item);
    return text;
  };
  if (devices.size() > 1)
    throw BadInput("records of " + workload_key + " on several devices; choose one with --device: " +
                   listed(devices, [](const auto& device) { return device.first + " (" + device.second + ")"; }));
  if (targets.size() > 1)
    throw BadInput("records of " + workload_key + " for several targets; choose one with --target: " +
                   listed(targets, [](const std::string& target) { return target; }));
  ExportScope scope{workload_key, *targets.begin(), {}};
  try {
    scope.device = kernels::DeviceInfo::from_fingerprint(records.front().device_fingerprint);
  } catch (const std::invalid_argument& error) {
    throw BadInput(workload_key + ": " + error.what());
  }
  return scope;
}

}  // namespace

namespace {

// A cache measured at another problem size than the one its records would be stored under is
// refused, unless --shape says which size they are: Kernel Tuner's problem_size may also be a grid
// of other numbers than the file's extents, so only a list of as many values, other than the
// extents in any order, is taken to be another size.
void check_problem_size(const tuner::LandscapeFile& cache, const measure::MeasureTask& task,
                        const KernelTunerImportRequest& request) {
  if (!request.shape.empty() || cache.problem_size.empty()) return;
  std::vector<std::int64_t> extents;
  std::string named;
  for (const auto& extent : task.workload.kernel().extents) {
    extents.push_back(extent.value);
    named += fmt::format("{}{}={}", named.empty() ? "" : ",", extent.name, extent.value);
  }
  auto sizes = cache.problem_size;
  if (sizes.size() != extents.size()) return;
  std::sort(sizes.begin(), sizes.end());
  std::sort(extents.begin(), extents.end());
  if (sizes == extents) return;
  throw BadInput(fmt::format("{}: problem_size [{}] is not the kernel's size {}; give the cache's size with --shape",
                             request.cache, fmt::join(cache.problem_size, ", "), named));
}

}  // namespace

KernelTunerImportResult import_kernel_tuner(const KernelTunerImportRequest& request) {
  tuner::LandscapeFile cache;
  kernels::Target target;
  try {
    const kernels::KernelSpec spec = backends::load_kernel_file(request.kernel_file);
    target = backends::parse_target(request.target.empty() ? spec.backend : request.target);
    cache = tuner::read_measured_file(request.cache);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  KernelTunerImportResult result;
  result.device_name = request.device_name.empty() ? cache.device : request.device_name;
  if (result.device_name.empty())
    throw BadInput(request.cache + ": no device_name in the file; name the device with --device-name");
  kernels::DeviceInfo device = imported_device(result.device_name, target, request.database, result.device_source);
  std::shared_ptr<measure::MeasureTask> task;
  std::vector<db::TuningRecord> records;
  try {
    task = make_kernel_task(request.kernel_file, request.shape, target.str(), &device);
    records = tuner::records_of_cache(cache, *task, std::string(tuner::kKernelTunerTuner) + ":" +
                                                        std::filesystem::path(request.cache).filename().string());
  } catch (const std::invalid_argument& error) {  // a config the file's space or constraints refuse
    throw BadInput(error.what() + name_only_hint(result.device_name, result.device_source));
  } catch (const BadInput& error) {  // no valid config at all
    throw BadInput(error.what() + name_only_hint(result.device_name, result.device_source));
  }
  check_problem_size(cache, *task, request);
  result.workload_key = task->workload.key();
  result.device_id = task->device.fingerprint_id();
  result.configs = records.size();
  for (const auto& record : records) result.failed += record.ok() ? 0 : 1;
  result.invalid = cache.invalid;
  auto database = open_database(request.database, db::Database::Mode::kReadWrite);
  for (std::int64_t id : database.insert(records)) result.added += id != 0 ? 1 : 0;
  return result;
}

KernelTunerExport export_kernel_tuner(const KernelTunerExportRequest& request) {
  db::RecordFilter filter;
  try {
    const kernels::KernelSpec spec = backends::load_kernel_file(request.kernel_file);
    filter.workload_key = kernels::kernel_workload_key(spec.name, kernels::resolve_extents(spec, request.shape));
    filter.template_name = kernels::kernel_template_name(spec);  // this source's records, not an earlier one's
    if (!request.target.empty()) filter.target = backends::parse_target(request.target).str();
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  filter.device = request.device;
  const auto records = open_database(request.database, db::Database::Mode::kReadOnly).records(filter);
  if (records.empty())
    throw BadInput("no records of " + filter.workload_key + (filter.target.empty() ? "" : " for target " + filter.target) +
                   (request.device.empty() ? "" : " on device " + request.device) + " in " + request.database);
  const ExportScope scope = export_scope(records, filter.workload_key);
  auto task = make_kernel_task(request.kernel_file, request.shape, scope.target, &scope.device);

  KernelTunerExport exported;
  exported.workload_key = filter.workload_key;
  exported.device_name = scope.device.name;
  tuner::RecordCheck check;
  check.add_template(*task->kernel_template);
  std::map<std::uint64_t, db::TuningRecord> successes, failures;  // by the config's index in the space
  for (const auto& record : records) {  // oldest first: a later record of a config replaces an earlier one
    try {
      check.full(record);
    } catch (const std::invalid_argument& error) {
      exported.passed_over.push_back(error.what());
      continue;
    }
    if (record.is_transport_failure() || (request.ok_only && !record.ok())) continue;
    (record.ok() ? successes : failures)[task->space.to_index(task->space.from_json(record.config))] = record;
  }
  for (const auto& success : successes) failures.erase(success.first);
  std::map<std::uint64_t, db::TuningRecord> chosen = std::move(failures);
  exported.failed = chosen.size();
  chosen.merge(successes);
  std::vector<db::TuningRecord> entries;
  for (auto& [index, record] : chosen) entries.push_back(std::move(record));
  exported.configs = entries.size();
  try {
    exported.text = tuner::kernel_tuner_cache_text(*task, entries);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  return exported;
}

tuner::KernelHeader kernel_apply_best(const KernelApplyBestRequest& request) {
  tuner::KernelHeaderRequest header_request;
  std::unique_ptr<kernels::KernelTemplate> kernel_file;
  kernels::Target target;
  try {
    const kernels::KernelSpec spec = backends::load_kernel_file(request.kernel_file);
    target = backends::parse_target(request.target.empty() ? spec.backend : request.target);
    if (target.backend != spec.backend)
      throw std::invalid_argument(request.kernel_file + ": backend: the kernel runs on " + spec.backend +
                                  ", not on target " + target.str());
    kernel_file = backends::kernel_file_template(spec);
    for (const auto& key : request.wanted) header_request.wanted.push_back(kernels::parse_workload_key(key).key());
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
  if (!request.target.empty()) header_request.target = target.str();
  header_request.device = request.device;
  header_request.source = request.database;
  header_request.kernel_file = request.kernel_file;
  try {  // nothing recorded: the default config shown is this machine's, if it has such a device
    header_request.fallback_device = backends::find_device(target);
  } catch (const std::invalid_argument&) {
  }
  const auto database = open_database(request.database, db::Database::Mode::kReadOnly);
  try {
    return tuner::make_kernel_header(database, *kernel_file, header_request);
  } catch (const std::invalid_argument& error) {
    throw BadInput(error.what());
  }
}

}  // namespace optune::app
