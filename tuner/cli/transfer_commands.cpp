// optune export / import: records as JSON lines, to move results between machines or merge
// databases (import skips records already present, so importing twice adds nothing).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli_support.hpp"
#include "optune/tuner/results/record_check.hpp"

namespace optune::cli {
namespace {

struct ExportOptions {
  std::string database = kDefaultDatabase;
  std::string out = "-";
  db::RecordFilter filter;
};

struct ImportOptions {
  std::string database = kDefaultDatabase;
  std::string in;
};

int run_export(const ExportOptions& options) {
  auto database = open_database(options.database, db::Database::Mode::kReadOnly);
  std::size_t count = 0;
  if (options.out == "-") {
    count = database.export_jsonl(std::cout, options.filter);
  } else {
    std::ofstream out(options.out);
    if (!out) throw UsageError("export: cannot write " + options.out);
    count = database.export_jsonl(out, options.filter);
  }
  std::fprintf(stderr, "exported %zu records\n", count);
  return 0;
}

int run_import(const ImportOptions& options) {
  std::ifstream in(options.in);
  if (!in) throw UsageError("import: cannot read " + options.in);
  auto database = open_database(options.database, db::Database::Mode::kReadWrite);
  tuner::RecordCheck check;
  std::size_t added = database.import_jsonl(in, [&check](const db::TuningRecord& record) { check.full(record); });
  std::printf("imported %zu new records into %s\n", added, options.database.c_str());
  return 0;
}

}  // namespace

void add_transfer_commands(CLI::App& app, CommandAction& action) {
  auto exporting = std::make_shared<ExportOptions>();
  CLI::App* export_command = app.add_subcommand("export", "Write records as JSON lines");
  export_command->add_option("--db", exporting->database, "SQLite database file")->capture_default_str();
  export_command->add_option("--out", exporting->out, "Output file ('-': standard output)")->capture_default_str();
  export_command->add_option("--op", exporting->filter.op, "Only this operator");
  export_command->add_option("--target", exporting->filter.target, "Only this target");
  export_command->add_option("--device", exporting->filter.device, "Only this device: id or part of its name");
  export_command->add_flag("--ok-only", exporting->filter.ok_only, "Only successful measurements");
  export_command->callback([exporting, &action] { action = [exporting] { return run_export(*exporting); }; });

  auto importing = std::make_shared<ImportOptions>();
  CLI::App* import_command = app.add_subcommand("import", "Add records from a JSON-lines file (duplicates skipped)");
  import_command->add_option("file", importing->in, "JSON-lines file written by optune export")->required();
  import_command->add_option("--db", importing->database, "SQLite database file")->capture_default_str();
  import_command->callback([importing, &action] { action = [importing] { return run_import(*importing); }; });
}

}  // namespace optune::cli
