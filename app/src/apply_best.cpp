#include "optune/app/apply_best.hpp"

#include <algorithm>
#include <optional>

#include "optune/app/bad_input.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/tasks.hpp"
#include "optune/backends/registry.hpp"
#include "optune/tuner/results/toolchain_change.hpp"

namespace optune::app {
namespace {

// A wanted workload that no template of the target runs (another dtype, groups a template
// refuses) would get a row of nothing.
void check_wanted(const std::string& key, const kernels::Target& target, const kernels::DeviceInfo& device) {
  try {
    const auto workload = kernels::parse_workload_key(key);
    const auto& kernel_template = backends::default_template(workload, target.backend, device);
    kernel_template.space(workload, device);
    // A table serves one dtype: a workload of a dtype the template has no table of would get no row.
    const auto forms = kernel_template.table_forms();
    if (std::none_of(forms.begin(), forms.end(), [&](const auto& form) { return form.dtype == workload.dtype; }))
      throw std::invalid_argument("template " + kernel_template.name() + " has no build-time table of " +
                                  std::string(kernels::data_type_name(workload.dtype)) + " workloads");
  } catch (const std::invalid_argument& error) {
    throw BadInput("apply-best: --workload " + key + ": " + error.what());
  }
}

// The rows of this machine's device whose records another toolchain built, or one they do not name
// (schema 5 or older): a table tuned under one may be slower, or not build, under the next. Rows of
// another device are not held to this machine's toolchain.
void count_other_toolchains(const ApplyBestRequest& request, const InstallPaths& paths,
                            const kernels::DeviceInfo& device, AppliedTable& table) {
  std::optional<measure::Toolchain> today;
  for (const auto& record : table.header.row_records) {
    if (record.device_id != device.fingerprint_id()) continue;
    if (!today) {
      MeasureSettings settings;
      settings.target = request.target;
      settings.build.compiler = request.compiler;
      today = todays_toolchain(settings, paths, device);
    }
    ++table.device_rows;
    if (tuner::match_toolchain(record, *today) == tuner::ToolchainMatch::kSame) continue;
    if (++table.other_toolchain_rows == 1)
      table.other_toolchain_example = record.workload_key + ": " + tuner::toolchain_difference(record, *today);
  }
}

}  // namespace

AppliedTable apply_best(const ApplyBestRequest& request, const InstallPaths& paths) {
  tuner::TunedHeaderRequest header_request;
  try {
    header_request.target = backends::parse_target(request.target);
    for (const auto& key : request.workloads) header_request.wanted.push_back(kernels::parse_workload_key(key).key());
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("apply-best: ") + error.what());
  }
  if (!request.suite.empty())
    for (const auto& entry : load_suite_option(request.suite, request.layout).entries)
      header_request.wanted.push_back(entry.workload.key());
  header_request.device = request.device;
  header_request.source = request.database;
  // Nothing recorded: the note of the default config is for this machine's device, if it has one.
  bool device_here = false;
  try {
    header_request.fallback_device = backends::find_device(header_request.target);
    device_here = true;
  } catch (const std::invalid_argument&) {
  }
  if (device_here)
    for (const auto& key : request.workloads) check_wanted(key, header_request.target, header_request.fallback_device);
  auto database = open_database(request.database, db::Database::Mode::kReadOnly);
  AppliedTable table;
  table.target = header_request.target.str();
  try {
    table.header = tuner::make_tuned_header(database, header_request);
  } catch (const std::invalid_argument& error) {
    throw BadInput(std::string("apply-best: ") + error.what());
  }
  if (device_here) count_other_toolchains(request, paths, header_request.fallback_device, table);
  return table;
}

bool write_if_changed(const std::string& path, const std::string& text) { return tuner::write_if_changed(path, text); }

}  // namespace optune::app
