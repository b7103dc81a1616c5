#include "optune/tuner/results/tuned_header.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/tuner/results/nearest_config.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/search/record_check.hpp"
#include "optune/tuner/results/stored_dispatch.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

// The fastest records read per workload: the best one an older space cannot read is passed over
// for the next.
constexpr std::size_t kCandidatesPerWorkload = 32;

// The fastest records of each workload of the target (and --device) that pass their checks; the
// others are noted in `passed_over` rather than failing the header (and every build using it).
std::vector<db::TuningRecord> checked_records(const db::Database& database, const TunedHeaderRequest& request,
                                              std::vector<std::string>& passed_over) {
  db::RecordFilter filter;
  filter.target = request.target.str();
  filter.device = request.device;
  std::vector<db::TuningRecord> records;
  for (auto& record : checked_top_k(database, filter, kCandidatesPerWorkload, passed_over)) {
    try {
      kernels::DeviceInfo::from_fingerprint(record.device_fingerprint);
    } catch (const std::exception& error) {
      passed_over.push_back(record.workload_key + ": " + error.what());
      continue;
    }
    records.push_back(std::move(record));
  }
  return records;
}

// The one device whose records the header is made from; nullopt when nothing is recorded.
std::optional<db::TuningRecord> pick_device(const std::vector<db::TuningRecord>& records,
                                            const TunedHeaderRequest& request) {
  std::map<std::string, db::TuningRecord> devices;
  for (const auto& record : records) devices.emplace(record.device_id, record);
  if (devices.size() > 1) {
    std::string names;
    for (const auto& [id, record] : devices)
      names += (names.empty() ? "" : ", ") + id + " (" + record.device_fingerprint.value("name", "") + ")";
    throw std::invalid_argument("records of several devices match target " + request.target.str() +
                                "; choose one with --device: " + names);
  }
  if (devices.empty()) return std::nullopt;
  return devices.begin()->second;
}

// The templates of a backend that fill the same table (conv2d.cpu and conv2d_gemm.cpu: one
// Conv2dConfig names the algorithm), in the backends' order.
using TemplateList = std::vector<const kernels::KernelTemplate*>;
TemplateList sharing_table(const kernels::KernelTemplate& first, const std::string& table_name) {
  TemplateList sharing;
  for (const auto* kernel : backends::all_templates()) {
    if (kernel->backend() != first.backend() || kernel->op() != first.op()) continue;
    const auto forms = kernel->table_forms();
    if (std::any_of(forms.begin(), forms.end(), [&](const auto& form) { return form.table_name == table_name; }))
      sharing.push_back(kernel);
  }
  return sharing;
}

// The form's workload of its default shape and dtype.
kernels::Workload representative_of(const kernels::KernelTemplate& kernel,
                                    const kernels::KernelTemplate::TableForm& form) {
  auto representative = kernels::parse_workload(kernel.op(), form.default_shape);
  representative.dtype = form.dtype;
  return representative;
}

// Whether a table of another dtype than f32 belongs in the header: its op and dtype are recorded
// or wanted, and the device's default template for them fills it (two tables of one dtype, as
// gemm_bf16.cpu's and gemm.cpu's widened bf16, define the same entry point: only one may be there).
bool low_precision_table_wanted(const kernels::KernelTemplate::TableForm& form, const TemplateList& sharing,
                                const std::set<std::pair<kernels::Op, kernels::DataType>>& kinds,
                                const kernels::DeviceInfo& device) {
  const kernels::KernelTemplate& kernel = *sharing.front();
  if (!kinds.count({kernel.op(), form.dtype})) return false;
  try {
    const auto& first = backends::default_template(representative_of(kernel, form), kernel.backend(), device);
    return std::find(sharing.begin(), sharing.end(), &first) != sharing.end();
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// The template a record was measured in; nullptr for a template this build does not have.
const kernels::KernelTemplate* owning_template(const db::TuningRecord& record) {
  try {
    return &backends::template_of_record(record.template_name, record.config);
  } catch (const std::invalid_argument&) {
    return nullptr;
  }
}

// The first record of a workload, in the database's ranking, among its records of the table's
// templates, each read in the space of its own template; nullopt when only records of an older
// space are left.
struct BestRow {
  const kernels::KernelTemplate* kernel;
  search_space::ConfigSpace space;
  tuner::UsableRecord usable;
};
using RankedRecords = std::vector<std::pair<const kernels::KernelTemplate*, db::TuningRecord>>;
std::optional<BestRow> best_row(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                                const RankedRecords& ranked) {
  std::map<const kernels::KernelTemplate*, search_space::ConfigSpace> spaces;
  for (const auto& [kernel, record] : ranked) {
    if (kernel->op() != workload.op) continue;  // a forged template name: conv2d.cpu on a GEMM's record
    auto space = spaces.find(kernel);
    if (space == spaces.end()) space = spaces.emplace(kernel, kernel->space(workload, device)).first;
    if (auto usable = tuner::first_usable(space->second, {record}))
      return BestRow{kernel, space->second, std::move(*usable)};
  }
  return std::nullopt;
}

// Rows for the wanted workloads of the table that have no tuned row: where a measured dispatch's
// rule holds one and the table has no range rows, its leaf's config; else the config of its
// nearest tuned shape (nearest_config.hpp), so that they do not run the one default config.
// Workloads a range row holds get none (`dispatched_keys`).
std::vector<std::string> untuned_rows(const db::Database& database, const TunedHeaderRequest& request,
                                      const TemplateList& sharing, kernels::DataType dtype,
                                      const kernels::DeviceInfo& device,
                                      const std::vector<db::DispatchRecord>& rules, bool has_range_rows,
                                      const std::set<std::string>& tuned_keys, std::set<std::string>& nearest_keys,
                                      std::set<std::string>& dispatched_keys,
                                      std::vector<db::TuningRecord>& row_records) {
  std::vector<std::string> rows;
  std::vector<std::string> passed_over;
  for (const auto& key : request.wanted) {
    if (tuned_keys.count(key) || nearest_keys.count(key) || dispatched_keys.count(key)) continue;
    auto workload = kernels::parse_workload_key(key);
    if (workload.op != sharing.front()->op() || workload.dtype != dtype) continue;
    if (auto match = dispatch_for(rules, workload, passed_over)) {
      const auto leaf = leaf_config(*match, workload, device);
      if (leaf && std::find(sharing.begin(), sharing.end(), leaf->kernel) != sharing.end()) {
        dispatched_keys.insert(key);
        if (has_range_rows) continue;
        rows.push_back(fmt::format("    {},  // {}: never tuned; leaf {} of dispatch rule {}",
                                   leaf->kernel->table_row(workload, device, search_space::ConfigView(leaf->space, leaf->config)),
                                   key, match->rule.leaf_name(match->leaf), match->record.id));
        continue;
      }
    }
    auto nearest = nearest_config(database, workload, request.target, device);
    if (!nearest || std::find(sharing.begin(), sharing.end(), nearest->kernel) == sharing.end()) continue;
    rows.push_back(fmt::format(
        "    {},  // {}: never tuned; the config tuned for {} ({:.1f} GFLOP/s there), {}{}",
        nearest->kernel->table_row(workload, device, search_space::ConfigView(nearest->space, nearest->config)), key,
        nearest->source.workload_key, nearest->source.gflops,
        nearest->ranked_by_model ? "ranked first by the cost model" : "the closest tuned shape",
        nearest->kernel == sharing.front() ? "" : " (" + nearest->kernel->name() + ")"));
    nearest_keys.insert(key);
    row_records.push_back(nearest->source);
  }
  return rows;
}

// One row per leaf of each measured dispatch of the table's templates, holding the leaf's box;
// none where the table's rows hold one shape each. A leaf whose config is valid at neither corner
// of its box is left out (its shapes run the default).
std::vector<std::string> range_rows(const std::vector<db::DispatchRecord>& rules, const TemplateList& sharing,
                                    kernels::DataType dtype, const kernels::DeviceInfo& device,
                                    std::vector<std::string>& passed_over) {
  std::vector<std::string> rows;
  for (const auto& record : rules) {
    const auto owner = std::find_if(sharing.begin(), sharing.end(),
                                    [&](const auto* kernel) { return kernel->name() == record.template_name; });
    if (owner == sharing.end()) continue;
    const kernels::KernelTemplate& kernel = **owner;
    try {
      const auto rule = rule_from_json(record.rule);
      const auto kind = kernels::parse_workload_key(record.low_key);
      if (kind.op != kernel.op() || kind.dtype != dtype) continue;
      for (std::size_t l = 0; l < rule.leaves.size(); ++l) {
        const auto low = workload_at(kind, rule.leaves[l].low), high = workload_at(kind, rule.leaves[l].high);
        const auto& config = rule.configs[rule.leaves[l].config];
        for (const auto* corner : {&low, &high}) {
          auto space = kernel.space(*corner, device);
          auto read = config_for_shape(space, config);
          if (!read) continue;
          std::string row = kernel.table_range_row(low, high, device, search_space::ConfigView(space, *read));
          if (row.empty()) return {};  // the table's rows hold one shape each
          rows.push_back(fmt::format("    {},  // {}: leaf {} of dispatch rule {} (the config tuned for {})", row,
                                     range_text(record), rule.leaf_name(l), record.id,
                                     rule.configs_from[rule.leaves[l].config]));
          break;
        }
      }
    } catch (const std::invalid_argument& error) {
      passed_over.push_back("dispatch rule " + std::to_string(record.id) + ": " + error.what());
    }
  }
  return rows;
}

struct SectionContext {
  const db::Database& database;
  const TunedHeaderRequest& request;
  bool has_records;  // false: nothing recorded for the target, so no nearest config either
  const std::vector<db::DispatchRecord>& rules;  // the measured dispatches in force on the device
  std::vector<std::string>& noisy;  // TunedHeader::noisy
  std::vector<std::string>& passed_over;  // TunedHeader::passed_over
  std::size_t& range_rows;  // TunedHeader::range_rows
  std::vector<db::TuningRecord>& row_records;  // TunedHeader::row_records
};

// One table: the default config of the default template (the highest-priority one that applies
// to the form's default shape), then for each tuned workload the best record of any template
// that fills the table, then the nearest rows of the wanted workloads never tuned.
std::string section(const SectionContext& context, const TemplateList& sharing,
                    const kernels::KernelTemplate::TableForm& form, const kernels::DeviceInfo& device,
                    const std::vector<db::TuningRecord>& best, std::set<std::string>& tuned_keys,
                    std::set<std::string>& nearest_keys, std::set<std::string>& dispatched_keys) {
  const auto representative = representative_of(*sharing.front(), form);
  const kernels::KernelTemplate& kernel =
      backends::default_template(representative, sharing.front()->backend(), device);
  auto representative_space = kernel.space(representative, device);
  auto default_config = kernel.default_config(representative, device, representative_space);
  const search_space::ConfigView default_view(representative_space, default_config);
  // The default's row as a comment: every line of it commented out.
  std::string default_row = kernel.table_row(representative, device, default_view);
  for (std::size_t at = default_row.find('\n'); at != std::string::npos; at = default_row.find('\n', at + 1))
    default_row.insert(at + 1, "//");
  std::string text =
      form.default_at_run_time
          ? fmt::format("// {}: shapes without a tuned row (and devices other than kDevice) run the template's\n"
                        "// default config for their shape and device, chosen at run time. For {} here:\n"
                        "//   {}\n\n",
                        kernel.name(), form.default_shape, default_row)
          : fmt::format("// {}: the default config, for shapes without a tuned row.\n"
                        "inline constexpr {} {}Default = {};\n\n",
                        kernel.name(), form.config_type, form.table_name, kernel.config_literal(default_view));
  // The ranked records of each workload, grouped by workload in the order of their best, each with
  // the template it was measured in (an old record with the template that reads it now).
  std::vector<std::string> order;
  std::map<std::string, RankedRecords> by_workload;
  for (const auto& record : best) {
    const auto* owner = owning_template(record);
    if (!owner || std::find(sharing.begin(), sharing.end(), owner) == sharing.end()) continue;
    if (kernels::parse_workload_key(record.workload_key).dtype != form.dtype) continue;
    auto& group = by_workload[record.workload_key];
    if (group.empty()) order.push_back(record.workload_key);
    group.emplace_back(owner, record);
  }
  std::vector<std::string> rows;
  for (const auto& key : order) {
    auto workload = kernels::parse_workload_key(key);
    auto row = best_row(workload, device, by_workload[key]);
    if (!row) continue;  // only records of an older space: the workload runs the default
    const std::string of_template = row->kernel == &kernel ? "" : " (" + row->kernel->name() + ")";
    const db::TuningRecord& record = row->usable.record;
    // A noisy figure is said where the application's reader sees it, and on stderr.
    const std::string noise = db::noise_text(record);
    if (!noise.empty()) context.noisy.push_back(key + ": " + noise);
    rows.push_back(fmt::format(
        "    {},  // {}: {:.1f} GFLOP/s{}{}",
        row->kernel->table_row(workload, device, search_space::ConfigView(row->space, row->usable.config)), key,
        record.gflops, of_template, noise.empty() ? "" : " (noisy: " + noise + ")"));
    tuned_keys.insert(key);
    context.row_records.push_back(record);
  }
  auto ranges = range_rows(context.rules, sharing, form.dtype, device, context.passed_over);
  context.range_rows += ranges.size();
  if (context.has_records) {
    for (auto& row : untuned_rows(context.database, context.request, sharing, form.dtype, device, context.rules,
                                  !ranges.empty(),
                                  tuned_keys, nearest_keys, dispatched_keys, context.row_records))
      rows.push_back(std::move(row));
  }
  for (auto& row : ranges) rows.push_back(std::move(row));
  text += fmt::format("// {}: the best recorded config of each tuned shape, then each untuned shape the\n"
                      "// application lists with its dispatch leaf's config or that of its nearest tuned shape,\n"
                      "// then the leaves of measured dispatches, each holding a box of shapes. The first row\n"
                      "// that holds a shape runs.\n"
                      "inline constexpr std::array<{}, {}> {} = {{{{\n", kernel.name(), form.row_type, rows.size(),
                      form.table_name);
  for (const auto& row : rows) text += row + "\n";
  return text + "}};\n";
}

}  // namespace

TunedHeader make_tuned_header(const db::Database& database, const TunedHeaderRequest& request) {
  TunedHeader header;
  auto records = checked_records(database, request, header.passed_over);
  auto device_record = pick_device(records, request);
  kernels::DeviceInfo device = device_record ? kernels::DeviceInfo::from_fingerprint(device_record->device_fingerprint)
                                             : request.fallback_device;
  header.device_name = device.name;
  std::vector<db::TuningRecord> best;
  for (auto& record : records)
    if (device_record && record.device_id == device_record->device_id) best.push_back(std::move(record));
  std::string includes = "#include <array>\n#include <cstdint>\n";
  std::string body;
  std::string entry_points;
  std::set<std::string> tuned_keys;
  std::set<std::string> nearest_keys;
  std::set<std::string> dispatched_keys;
  std::set<std::string> tables;
  const auto rules = device_record ? database.dispatches(request.target.str(), device_record->device_id)
                                   : std::vector<db::DispatchRecord>{};
  const SectionContext context{database,       request, device_record.has_value(), rules, header.noisy,
                               header.passed_over, header.range_rows, header.row_records};
  std::set<std::pair<kernels::Op, kernels::DataType>> kinds;  // of the records and wanted workloads
  for (const auto& record : best) {
    const auto workload = kernels::parse_workload_key(record.workload_key);
    kinds.insert({workload.op, workload.dtype});
  }
  for (const auto& key : request.wanted) {
    const auto workload = kernels::parse_workload_key(key);
    kinds.insert({workload.op, workload.dtype});
  }
  for (const auto* kernel : backends::all_templates()) {
    if (kernel->backend() != request.target.backend) continue;
    for (const auto& form : kernel->table_forms()) {
      if (tables.count(form.table_name)) continue;
      const TemplateList sharing = sharing_table(*kernel, form.table_name);
      if (form.dtype != kernels::DataType::kF32 && !low_precision_table_wanted(form, sharing, kinds, device)) continue;
      tables.insert(form.table_name);
      const std::string include = "#include <" + form.include + ">\n";
      if (includes.find(include) == std::string::npos) includes += include;
      body += section(context, sharing, form, device, best, tuned_keys, nearest_keys, dispatched_keys) + "\n";
      if (!form.entry_point.empty()) entry_points += "\n" + form.entry_point;
    }
  }
  header.tuned = tuned_keys.size();
  std::set<std::string> noted;
  for (const auto& key : request.wanted) {
    if (tuned_keys.count(key) || !noted.insert(key).second) continue;
    (dispatched_keys.count(key) ? header.dispatched : nearest_keys.count(key) ? header.nearest : header.untuned)
        .push_back(key);
  }

  std::string untuned;
  for (const auto& key : header.dispatched) untuned += "//   " + key + " (its leaf of a measured dispatch)\n";
  for (const auto& key : header.nearest) untuned += "//   " + key + " (the config of its nearest tuned shape)\n";
  for (const auto& key : header.untuned) untuned += "//   " + key + " (the default config)\n";
  header.text = fmt::format(
      "// Generated by `optune apply-best` from {} for target {} on {} [{}].\n"
      "// Do not edit: regenerate with optune apply-best (or CMake's optune_apply_best()).\n"
      "// {}.{}\n"
      "#pragma once\n\n{}\nnamespace optune::tuned {{\n\n"
      "inline constexpr char kTarget[] = \"{}\";\ninline constexpr char kDevice[] = \"{}\";\n\n{}"
      "}}  // namespace optune::tuned\n{}",
      request.source, request.target.str(), device.name, device.fingerprint_id(), counted(header.tuned, "tuned workload"),
      untuned.empty() ? "" : " Never tuned:\n" + untuned, includes,
      request.target.str(), device.name, body,
      entry_points.empty() ? "" : "\n// What the application calls.\nnamespace optune {\n" + entry_points + "\n}  // namespace optune\n");
  return header;
}

bool write_if_changed(const std::string& path, const std::string& text) {
  std::ifstream existing(path);
  if (existing) {
    std::stringstream current;
    current << existing.rdbuf();
    if (current.str() == text) return false;
  }
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
  return true;
}

}  // namespace optune::tuner
