// optune apply-best: writes the header of tuned configs an application compiles in (build-time
// consumption), and notes on stderr the wanted workloads that have no tuned config (they run their
// leaf of a measured dispatch, the config of their nearest tuned shape, or the default). With
// --kernel, the table of a user's kernel file (tuner/results/kernel_header.hpp).
#include <algorithm>
#include <cstdio>

#include "cli_support.hpp"
#include "optune/app/apply_best.hpp"
#include "optune/app/kernel_results.hpp"
#include "optune/app/output_text.hpp"

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

int run_kernel_apply_best(const ApplyBestOptions& options) {
  if (!options.suite.empty() || !options.layout.empty())
    throw UsageError("apply-best: --suite and --layout do not go with --kernel (name its sizes with --workload)");
  app::KernelApplyBestRequest request{options.database, options.kernel_file, options.target_given ? options.target : "",
                                      options.device, options.workloads};
  const tuner::KernelHeader header = app::kernel_apply_best(request);
  for (const auto& problem : header.passed_over)
    std::fprintf(stderr, "optune: note: passed over a record of %s\n", problem.c_str());
  const bool written = app::write_if_changed(options.out, header.text);
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
  const app::AppliedTable table = app::apply_best(
      {options.database, options.target, options.device, options.workloads, options.suite, options.layout,
       options.compiler},
      install_paths());
  const tuner::TunedHeader& header = table.header;
  for (const auto& problem : header.passed_over)
    std::fprintf(stderr, "optune: note: passed over a bad record of %s\n", problem.c_str());
  bool written = app::write_if_changed(options.out, header.text);
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
  if (table.other_toolchain_rows > 0)
    std::fprintf(stderr,
                 "optune: note: %zu of %zu tuned rows come from records of another or an unknown toolchain than "
                 "today's (%s); optune revalidate re-measures them\n",
                 table.other_toolchain_rows, table.device_rows, table.other_toolchain_example.c_str());
  std::printf("%s: %s%s for %s on %s%s\n", options.out.c_str(), app::counted(header.tuned, "tuned workload").c_str(),
              header.range_rows ? (", " + app::counted(header.range_rows, "dispatch leaf", "dispatch leaves")).c_str() : "",
              table.target.c_str(), header.device_name.c_str(), written ? "" : " (unchanged)");
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
