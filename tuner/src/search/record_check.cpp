#include "optune/tuner/search/record_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "optune/backends/registry.hpp"
#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_digest.hpp"
#include "optune/kernels/kernel_file_template.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/target.hpp"
#include "optune/measure/measure_result.hpp"
#include "optune/measure/median_interval.hpp"

namespace optune::tuner {

double max_plausible_gflops(kernels::DataType dtype) {
  // 64-bit types count as 32-bit: no device runs them faster.
  const double bytes = double(std::min<std::size_t>(4, kernels::data_type_bytes(dtype)));
  return kMaxPlausibleGflops * (4 / bytes) * (4 / bytes);
}

namespace {

[[noreturn]] void reject(const std::string& problem) { throw std::invalid_argument(problem); }

// The id of a fingerprint as it was stored, computed as DeviceInfo::fingerprint_id() computes
// it (FNV-1a of the canonical dump); an older optune's fingerprint, with fewer keys, keeps its id.
std::string stored_fingerprint_id(const nlohmann::json& fingerprint) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : fingerprint.dump()) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

bool is_finite_non_negative(double value) { return std::isfinite(value) && value >= 0; }

}  // namespace

void RecordCheck::add_template(const kernels::KernelTemplate& kernel_template) { extra_templates_.push_back(&kernel_template); }

const kernels::KernelTemplate* RecordCheck::template_of(const db::TuningRecord& record, const kernels::Workload& workload) {
  for (const auto* kernel : extra_templates_)
    if (kernel->reads_record(record.template_name, record.config)) return kernel;
  if (workload.op == kernels::Op::kKernel) {
    const std::string expected = "kernel." + workload.kernel().name + ".";
    if (record.template_name.rfind(expected, 0) != 0)
      reject("template '" + record.template_name + "' is not kernel " + workload.kernel().name + "'s");
    return nullptr;
  }
  return &backends::template_of_record(record.template_name, record.config);
}

kernels::Workload RecordCheck::workload(const std::string& key) {
  if (auto found = workloads_.find(key); found != workloads_.end()) return found->second;
  kernels::Workload workload;
  try {
    workload = kernels::parse_workload_key(key);
    kernels::validate_workload(workload);
  } catch (const std::invalid_argument& error) {
    reject("workload_key '" + key + "': " + error.what());
  }
  if (workload.key() != key) reject("workload_key '" + key + "' is not written as optune writes it ('" + workload.key() + "')");
  return workloads_.emplace(key, workload).first->second;
}

void RecordCheck::figures(const db::TuningRecord& record) {
  if (!record.toolchain.is_null() && !record.toolchain.is_object()) reject("toolchain must be an object of strings");
  const kernels::Workload parsed = workload(record.workload_key);
  // The database reads a JSON column it cannot parse as a string saying so (record_rows.cpp).
  auto require_object = [](const nlohmann::json& value, const char* what) {
    if (value.is_string()) reject(value.get<std::string>());
    if (!value.is_object()) reject(std::string(what) + " must be an object");
  };
  require_object(record.config, "config");
  require_object(record.device_fingerprint, "device fingerprint");
  try {
    measure::parse_error_kind(record.error_kind);
  } catch (const std::invalid_argument&) {
    reject("unknown error_kind '" + record.error_kind + "'");
  }
  if (!is_finite_non_negative(record.timestamp)) reject("timestamp must be a finite number of unix seconds");
  if (record.timestamp > measure::unix_now() + kMaxClockSkewSeconds)
    reject(fmt::format("timestamp {:.0f} is in the future", record.timestamp));
  if (!is_finite_non_negative(record.build_seconds)) reject("build_seconds must be finite and not negative");
  for (double cost : record.costs)
    if (!std::isfinite(cost) || cost < 0) reject("costs must be finite and not negative");
  if (record.load && !(*record.load >= 0 && *record.load <= 1)) reject("load must be a share from 0 to 1");
  if (record.device_load && !(*record.device_load >= 0 && *record.device_load <= 1))
    reject("device_load must be a share from 0 to 1");
  if (!record.ok()) {
    if (!is_finite_non_negative(record.median_seconds) || !is_finite_non_negative(record.gflops))
      reject("a failed record's median_seconds and gflops must be finite and not negative");
    return;
  }
  if (record.costs.empty()) reject("a successful record must have its costs");
  for (double cost : record.costs)
    if (cost <= 0) reject("a successful record's costs must be positive");
  const double median = measure::median(record.costs);
  if (!(std::abs(record.median_seconds - median) <= 1e-9 * median))
    reject(fmt::format("median_seconds {} is not the median of its costs ({})", record.median_seconds, median));
  // A kernel file's work per run is the file's (flops, else bytes, else one run): its key alone
  // does not say it, so its records' throughput is checked where the file is given (full()).
  const bool work_known = parsed.flops() > 0;
  const double gflops = parsed.flops() / record.median_seconds / 1e9;
  if (work_known && !(std::abs(record.gflops - gflops) <= kGflopsTolerance * gflops))
    reject(fmt::format("gflops {} is not the workload's flops / median_seconds ({:.6g})", record.gflops, gflops));
  if (!std::isfinite(record.gflops) || record.gflops < 0) reject("gflops must be finite and not negative");
  if (work_known && record.gflops > max_plausible_gflops(parsed.dtype))
    reject(fmt::format("gflops {} is beyond any device ({} at most in {})", record.gflops,
                       max_plausible_gflops(parsed.dtype), kernels::data_type_name(parsed.dtype)));
  // A forged spread of 0 would make a record look trustworthy enough to displace a winner.
  if (record.spread) {
    const auto spread = measure::median_spread(record.costs);
    if (!spread || !(std::abs(*record.spread - *spread) <= 1e-9 + 1e-6 * *spread))
      reject(fmt::format("spread {} is not the spread of its costs ({})", *record.spread, spread.value_or(0)));
  }
}

void RecordCheck::full(const db::TuningRecord& record) {
  figures(record);
  const kernels::Workload parsed = workload(record.workload_key);
  // (A record of a template since split in two is checked against the part its config is of.)
  // nullptr: a kernel file's record whose file was not given, checked for all but its space.
  const kernels::KernelTemplate* kernel = template_of(record, parsed);
  if (kernel && kernel->op() != parsed.op)
    reject("template '" + record.template_name + "' is not a template of " + std::string(kernels::op_name(parsed.op)));
  kernels::Target target;
  try {
    target = backends::parse_target(record.target);
  } catch (const std::invalid_argument& error) {
    reject(std::string("target: ") + error.what());
  }
  if (target.str() != record.target) reject("target '" + record.target + "' is not written as optune writes it");
  const bool runs_there = kernel ? target.backend == kernel->backend()
                                 : kernels::is_kernel_template_of(record.template_name, parsed.kernel().name, target.backend);
  if (!runs_there) reject("template '" + record.template_name + "' does not run on target '" + record.target + "'");
  if (stored_fingerprint_id(record.device_fingerprint) != record.device_id)
    reject("device_id '" + record.device_id + "' is not the id of its device_fingerprint");
  if (!kernel) {
    if (!record.config.is_object()) reject("config must be an object of knob values");
    return;
  }

  const std::string space_key = kernel->name() + " " + record.workload_key + " " + record.device_id;
  auto space = spaces_.find(space_key);
  if (space == spaces_.end()) {
    kernels::DeviceInfo device;
    try {
      device = kernels::DeviceInfo::from_fingerprint(record.device_fingerprint);
    } catch (const std::exception& error) {
      reject(std::string("device_fingerprint: ") + error.what());
    }
    try {
      space = spaces_.emplace(space_key, kernel->space(parsed, device)).first;
    } catch (const std::exception& error) {  // a template that has no space for this workload or device
      reject(record.template_name + " has no space for " + record.workload_key + ": " + error.what());
    }
  }
  search_space::Config config;
  try {
    config = space->second.from_json(record.config);
  } catch (const std::exception& error) {
    reject(std::string("config is not a point of ") + record.template_name + "'s space: " + error.what());
  }
  if (space->second.to_json(config) != record.config)
    reject("config is not written as optune writes it: " + space->second.to_json(config).dump());
  if (std::string violation = space->second.first_violation(config); !violation.empty())
    reject("config breaks the constraint of " + record.template_name + "'s space: " + violation);
  if (const auto* file = kernels::kernel_file_of(*kernel); file && record.ok()) {
    // The file says the work per run, which the key alone does not (figures()).
    const double work = file->workload(kernels::kernel_shape_text(parsed.kernel()),
                                       kernels::DeviceInfo::from_fingerprint(record.device_fingerprint))
                            .flops();
    const double gflops = work / record.median_seconds / 1e9;
    if (!(std::abs(record.gflops - gflops) <= kGflopsTolerance * gflops))
      reject(fmt::format("gflops {} is not the kernel's work / median_seconds ({:.6g})", record.gflops, gflops));
  }
}

std::vector<db::TuningRecord> checked_top_k(const db::Database& database, const db::RecordFilter& filter,
                                            std::size_t k, std::vector<std::string>& passed_over) {
  RecordCheck check;
  // Ask for as many more per group as there were bad records in all, until that is enough.
  for (std::size_t extra = 0;;) {
    std::vector<db::TuningRecord> good;
    std::vector<std::string> bad;
    for (auto& record : database.top_k(filter, k + extra)) {
      try {
        check.figures(record);
        good.push_back(std::move(record));
      } catch (const std::invalid_argument& error) {
        bad.push_back(record.workload_key + ": " + error.what());
      }
    }
    if (bad.size() > extra) {
      extra = bad.size();
      continue;
    }
    std::map<std::string, std::size_t> per_group;  // workload, target, device -> records kept
    std::erase_if(good, [&](const db::TuningRecord& record) {
      return ++per_group[record.workload_key + " " + record.target + " " + record.device_id] > k;
    });
    passed_over.insert(passed_over.end(), bad.begin(), bad.end());
    return good;
  }
}

}  // namespace optune::tuner
