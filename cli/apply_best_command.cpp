// optune apply-best: writes the header of tuned configs an application compiles in (build-time
// consumption), and notes on stderr the wanted workloads that have no tuned config (they run their
// leaf of a measured dispatch, the config of their nearest tuned shape, or the default). With
// --kernel, the table of a user's kernel file (tuner/results/kernel_header.hpp).
#include <algorithm>
#include <cstdio>

#include "cli_support.hpp"
#include "optune/app/kernel_results.hpp"
#include "optune/app/measuring.hpp"
#include "optune/backends/registry.hpp"
#include "optune/tuner/scheduling/suite.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/results/toolchain_change.hpp"
#include "optune/tuner/results/tuned_header.hpp"

namespace optune::cli {
namespace {

struct ApplyBestOptions {
  std::string database = kDefaultDatabase;
  std::string target = "cpu";
  std::string device;
  std::string out;
  std::vector<std::string> workloads;  // keys the application uses
  std::string suite;                   // or a suite file listing them
  std::string layout;  // --layout: replaces the suite's layout
  std::string kernel_file;             // --kernel: a user's kernel file's table instead
  std::string compiler = "c++";  // today's, as tune's --compiler: the rows' records are held to its toolchain
  bool target_given = false;
};

// Rows compiled in from noisy records: their configs may not be the fastest on a quiet machine.
void note_noisy(const std::vector<std::string>& rows) {
  for (const auto& row : rows)
    std::fprintf(stderr, "optune: note: the tuned row of %s (noisy); tune it again on a quiet machine to trust it\n",
                 row.c_str());
}

// One note for the rows of this machine's device whose records another toolchain built, or one they
// do not name (schema 5 or older): a table tuned under one may be slower, or not build, under the
// next. Rows of another device are not held to this machine's toolchain.
void note_other_toolchains(const tuner::TunedHeader& header, const ApplyBestOptions& options,
                           const kernels::DeviceInfo& device) {
  std::size_t rows = 0, other = 0;
  std::string example;
  std::optional<measure::Toolchain> today;
  for (const auto& record : header.row_records) {
    if (record.device_id != device.fingerprint_id()) continue;
    if (!today) {
      app::MeasureSettings settings;
      settings.target = options.target;
      settings.compiler = options.compiler;
      today = app::todays_toolchain(settings, install_paths(), device);
    }
    ++rows;
    if (tuner::match_toolchain(record, *today) == tuner::ToolchainMatch::kSame) continue;
    if (++other == 1) example = record.workload_key + ": " + tuner::toolchain_difference(record, *today);
  }
  if (other > 0)
    std::fprintf(stderr,
                 "optune: note: %zu of %zu tuned rows come from records of another or an unknown toolchain than "
                 "today's (%s); optune revalidate re-measures them\n",
                 other, rows, example.c_str());
}

int run_kernel_apply_best(const ApplyBestOptions& options) {
  if (!options.suite.empty() || !options.layout.empty())
    throw UsageError("apply-best: --suite and --layout do not go with --kernel (name its sizes with --workload)");
  app::KernelApplyBestRequest request{options.database, options.kernel_file, options.target_given ? options.target : "",
                                      options.device, options.workloads};
  const tuner::KernelHeader header = app::kernel_apply_best(request);
  for (const auto& problem : header.passed_over)
    std::fprintf(stderr, "optune: note: passed over a record of %s\n", problem.c_str());
  const bool written = tuner::write_if_changed(options.out, header.text);
  for (const auto& item : header.untuned)
    std::fprintf(stderr, "optune: note: no tuned config for %s; it runs the default config\n", item.c_str());
  note_noisy(header.noisy);
  std::string devices;
  for (const auto& name : header.devices) devices += (devices.empty() ? "" : ", ") + name;
  std::printf("%s: %zu tuned rows of %s%s%s\n", options.out.c_str(), header.rows, options.kernel_file.c_str(),
              devices.empty() ? "" : (" on " + devices).c_str(), written ? "" : " (unchanged)");
  return 0;
}

int run_apply_best(const ApplyBestOptions& options) {
  refuse_output_over_database("apply-best", options.out, options.database);
  if (!options.kernel_file.empty()) return run_kernel_apply_best(options);
  tuner::TunedHeaderRequest request;
  try {
    request.target = backends::parse_target(options.target);
    for (const auto& key : options.workloads) request.wanted.push_back(kernels::parse_workload_key(key).key());
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("apply-best: ") + error.what());
  }
  if (!options.suite.empty()) {
    for (const auto& entry : load_suite_option(options.suite, options.layout).entries) {
      request.wanted.push_back(entry.workload.key());
    }
  }
  request.device = options.device;
  request.source = options.database;
  // Nothing recorded: the note of the default config is for this machine's device, if it has one.
  bool device_here = false;
  try {
    request.fallback_device = backends::find_device(request.target);
    device_here = true;
  } catch (const std::invalid_argument&) {
  }
  // A wanted workload that no template of the target runs (another dtype, groups a template
  // refuses) would get a row of nothing; checked where this machine has the target's device.
  if (device_here)
    for (const auto& key : options.workloads) {
      try {
        const auto workload = kernels::parse_workload_key(key);
        const auto& kernel_template =
            backends::default_template(workload, request.target.backend, request.fallback_device);
        kernel_template.space(workload, request.fallback_device);
        // A table serves one dtype: a workload of a dtype the template has no table of would get no row.
        const auto forms = kernel_template.table_forms();
        if (std::none_of(forms.begin(), forms.end(), [&](const auto& form) { return form.dtype == workload.dtype; }))
          throw std::invalid_argument("template " + kernel_template.name() + " has no build-time table of " +
                                      std::string(kernels::data_type_name(workload.dtype)) + " workloads");
      } catch (const std::invalid_argument& error) {
        throw UsageError("apply-best: --workload " + key + ": " + error.what());
      }
    }
  auto database = open_database(options.database, db::Database::Mode::kReadOnly);
  tuner::TunedHeader header;
  try {
    header = tuner::make_tuned_header(database, request);
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("apply-best: ") + error.what());
  }
  for (const auto& problem : header.passed_over)
    std::fprintf(stderr, "optune: note: passed over a bad record of %s\n", problem.c_str());
  bool written = tuner::write_if_changed(options.out, header.text);
  for (const auto& key : header.dispatched)
    std::fprintf(stderr, "optune: note: no tuned config for %s on %s; it runs its leaf of a measured dispatch\n",
                 key.c_str(), header.device_name.c_str());
  for (const auto& key : header.nearest)
    std::fprintf(stderr, "optune: note: no tuned config for %s on %s; it runs the config of its nearest tuned shape\n",
                 key.c_str(), header.device_name.c_str());
  for (const auto& key : header.untuned)
    std::fprintf(stderr, "optune: note: no tuned config for %s on %s; it runs the default config\n", key.c_str(),
                 header.device_name.c_str());
  note_noisy(header.noisy);
  if (device_here) note_other_toolchains(header, options, request.fallback_device);
  std::printf("%s: %s%s for %s on %s%s\n", options.out.c_str(), tuner::counted(header.tuned, "tuned workload").c_str(),
              header.range_rows ? (", " + tuner::counted(header.range_rows, "dispatch leaf", "dispatch leaves")).c_str() : "",
              request.target.str().c_str(), header.device_name.c_str(), written ? "" : " (unchanged)");
  return 0;
}

}  // namespace

void add_apply_best_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<ApplyBestOptions>();
  CLI::App* command = app.add_subcommand("apply-best", "Write a header of the best configs for build-time use");
  add_database_option(*command, options->database);
  CLI::Option* target = command->add_option("--target", options->target,
                                            "Target the configs are for (with --kernel: default every target of its backend)")
                            ->capture_default_str();
  command->add_option("--device", options->device, "Device id or part of its name (when several are recorded)");
  command->add_option("--out", options->out, "Header to write (rewritten only when its content changes)")->required();
  command->add_option("--workload", options->workloads, "Workload key the application uses (repeatable)");
  command->add_option("--suite", options->suite, "Suite file whose workloads the application uses");
  add_layout_option(*command, options->layout);
  command->add_option("--compiler", options->compiler,
                      "C++ compiler tuning uses today (CPU targets): rows whose records another toolchain built are "
                      "noted")
      ->capture_default_str();
  command->add_option("--kernel", options->kernel_file,
                      "A kernel file (configs/kernels/*.toml): write its table of -D strings and launch sizes instead");
  command->callback([options, target, &action] {
    options->target_given = target->count() > 0;
    action = [options] { return run_apply_best(*options); };
  });
}

}  // namespace optune::cli
