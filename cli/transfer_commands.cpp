// optune export / import: records as JSON lines, to move results between machines or merge
// databases (import skips records already present, so importing twice adds nothing); and a
// kernel file's records from and to Kernel Tuner's cache files (--kernel-tuner).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli_support.hpp"
#include "optune/app/kernel_results.hpp"
#include "optune/app/output_text.hpp"
#include "optune/app/record_transfer.hpp"

namespace optune::cli {
namespace {

struct ExportOptions {
  std::string database = kDefaultDatabase;
  std::string out = "-";
  db::RecordFilter filter;
  bool kernel_tuner = false;  // a Kernel Tuner cache file of --kernel's records
  std::string kernel_file;
  std::string shape;
};

struct ImportOptions {
  std::string database = kDefaultDatabase;
  std::string in;
  app::KernelTunerImportRequest kernel_tuner;  // --kernel-tuner CACHE --kernel FILE ...
};

void write_output(const std::string& out, const std::string& text) {
  if (out == "-") {
    std::cout << text;
    return;
  }
  std::ofstream file(out, std::ios::binary);
  file << text;
  if (!file) throw UsageError("export: cannot write " + out);
}

int run_kernel_tuner_export(const ExportOptions& options) {
  refuse_output_over_database("export", options.out, options.database);
  if (options.kernel_file.empty()) throw UsageError("export: --kernel-tuner needs --kernel FILE");
  if (!options.filter.op.empty()) throw UsageError("export: --op does not go with --kernel-tuner (the kernel file names the workload)");
  app::KernelTunerExportRequest request{options.database, options.kernel_file, options.shape,
                                        options.filter.target, options.filter.device, options.filter.ok_only};
  const app::KernelTunerExport exported = app::export_kernel_tuner(request);
  for (const auto& problem : exported.passed_over)
    std::fprintf(stderr, "optune: note: passed over a bad record of %s: %s\n", exported.workload_key.c_str(), problem.c_str());
  write_output(options.out, exported.text);
  std::fprintf(stderr, "exported %s of %s on %s (%zu failed) as a Kernel Tuner cache\n",
               app::counted(exported.configs, "configuration").c_str(), exported.workload_key.c_str(),
               exported.device_name.c_str(), exported.failed);
  return 0;
}

int run_export(const ExportOptions& options) {
  if (options.kernel_tuner) return run_kernel_tuner_export(options);
  refuse_output_over_database("export", options.out, options.database);
  if (!options.kernel_file.empty() || !options.shape.empty())
    throw UsageError("export: --kernel and --shape go with --kernel-tuner (JSON lines take --op, --target, --device)");
  auto database = open_database(options.database, db::Database::Mode::kReadOnly);
  db::Database::JsonlCounts count;
  if (options.out == "-") {
    count = database.export_jsonl(std::cout, options.filter);
  } else {
    std::ofstream out(options.out);
    if (!out) throw UsageError("export: cannot write " + options.out);
    count = database.export_jsonl(out, options.filter);
  }
  std::fprintf(stderr, "exported %s and %s\n", app::counted(count.records, "record").c_str(),
               app::counted(count.dispatch_rules, "dispatch rule").c_str());
  return 0;
}

int run_kernel_tuner_import(const ImportOptions& options) {
  if (!options.in.empty()) throw UsageError("import: give either a JSON-lines file or --kernel-tuner CACHE, not both");
  if (options.kernel_tuner.kernel_file.empty()) throw UsageError("import: --kernel-tuner needs --kernel FILE");
  app::KernelTunerImportRequest request = options.kernel_tuner;
  request.database = options.database;
  const app::KernelTunerImportResult result = app::import_kernel_tuner(request);
  std::printf("imported %s into %s: %s of %s (%zu failed, %zu invalid left out) on %s [%s, fingerprint from %s]\n",
              app::counted(result.added, "new record").c_str(), options.database.c_str(),
              app::counted(result.configs, "configuration").c_str(), result.workload_key.c_str(), result.failed,
              result.invalid, result.device_name.c_str(), result.device_id.c_str(), result.device_source.c_str());
  return 0;
}

int run_import(const ImportOptions& options) {
  if (!options.kernel_tuner.cache.empty()) return run_kernel_tuner_import(options);
  if (!options.kernel_tuner.kernel_file.empty() || !options.kernel_tuner.shape.empty() ||
      !options.kernel_tuner.target.empty() || !options.kernel_tuner.device_name.empty())
    throw UsageError("import: --kernel, --shape, --target and --device-name go with --kernel-tuner CACHE");
  if (options.in.empty()) throw UsageError("import: give a JSON-lines file (optune export) or --kernel-tuner CACHE");
  std::ifstream in(options.in);
  if (!in) throw UsageError("import: cannot read " + options.in);
  const auto added = app::import_records(options.database, in);
  std::printf("imported %s and %s into %s\n", app::counted(added.records, "new record").c_str(),
              app::counted(added.dispatch_rules, "new dispatch rule").c_str(), options.database.c_str());
  return 0;
}

}  // namespace

void add_transfer_commands(CLI::App& app, CommandAction& action) {
  auto exporting = std::make_shared<ExportOptions>();
  CLI::App* export_command = app.add_subcommand(
      "export", "Write records as JSON lines, or a kernel file's as a Kernel Tuner cache (--kernel-tuner)");
  add_database_option(*export_command, exporting->database);
  export_command->add_option("--out", exporting->out, "Output file ('-': standard output)")->capture_default_str();
  export_command->add_option("--op", exporting->filter.op, "Only this operator");
  export_command->add_option("--target", exporting->filter.target, "Only this target");
  export_command->add_option("--device", exporting->filter.device, "Only this device: id or part of its name");
  export_command->add_flag("--ok-only", exporting->filter.ok_only, "Only successful measurements");
  export_command->add_flag("--kernel-tuner", exporting->kernel_tuner,
                           "Write a Kernel Tuner cache file of --kernel's records (one device, one target)");
  export_command->add_option("--kernel", exporting->kernel_file, "Kernel file whose workload is exported (--kernel-tuner)");
  export_command->add_option("--shape", exporting->shape, "The kernel's extents, e.g. N=1024,M=512 (default: the file's)");
  export_command->callback([exporting, &action] { action = [exporting] { return run_export(*exporting); }; });

  auto importing = std::make_shared<ImportOptions>();
  CLI::App* import_command = app.add_subcommand(
      "import", "Add records from a JSON-lines file, or a Kernel Tuner cache's as a kernel file's (duplicates skipped)");
  import_command->add_option("file", importing->in, "JSON-lines file written by optune export");
  add_database_option(*import_command, importing->database);
  auto& kernel_tuner = importing->kernel_tuner;
  import_command->add_option("--kernel-tuner", kernel_tuner.cache,
                             "A Kernel Tuner cache file or T4 results file (.json, .json.gz) to import as records of --kernel");
  import_command->add_option("--kernel", kernel_tuner.kernel_file, "Kernel file whose knobs are the cache's parameters");
  import_command->add_option("--shape", kernel_tuner.shape, "The kernel's extents, e.g. N=1024,M=512 (default: the file's)");
  import_command->add_option("--target", kernel_tuner.target, "Target of the records (default: the kernel's backend)");
  import_command->add_option("--device-name", kernel_tuner.device_name, "Device the cache was measured on (default: its device_name)");
  import_command->callback([importing, &action] { action = [importing] { return run_import(*importing); }; });
}

}  // namespace optune::cli
