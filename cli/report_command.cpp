// optune report: writes one self-contained HTML page of a database (per task, best GFLOP/s
// against trial for each tuning run as inline SVG; a table of default vs tuned), to open from
// a file or a CI artefact without a server.
#include <cstdio>

#include "cli_support.hpp"
#include "optune/tuner/results/html_report.hpp"
#include "optune/tuner/results/tuned_header.hpp"

namespace optune::cli {
namespace {

struct ReportOptions {
  std::string database = kDefaultDatabase;
  std::string out = "report.html";
};

int run_report(const ReportOptions& options) {
  refuse_output_over_database("report", options.out, options.database);
  auto database = open_database(options.database, db::Database::Mode::kReadOnly);
  const std::string page = tuner::html_report(database, options.database);
  try {
    tuner::write_if_changed(options.out, page);
  } catch (const std::runtime_error& error) {
    throw UsageError("report: " + std::string(error.what()));
  }
  std::printf("%s: report of %zu records of %s\n", options.out.c_str(), database.count(), options.database.c_str());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* report = app.add_subcommand("report", "Write an HTML report: tuning curves per task, default vs tuned");
  add_database_option(*report, options->database, "only read");
  report->add_option("--out", options->out, "HTML file to write")->capture_default_str();
  report->callback([options, &action] { action = [options] { return run_report(*options); }; });
}

}  // namespace optune::cli
