// optune report: writes one self-contained HTML page of a database (per task, every record against
// its trial number with the best so far and the default config's figure, failures by kind; a
// table of default vs tuned), to open from a file or a CI artefact without a server.
#include <cstdio>

#include "cli_support.hpp"
#include "optune/app/query.hpp"
#include "optune/tuner/results/html_report.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/results/tuned_header.hpp"

namespace optune::cli {
namespace {

struct ReportOptions {
  std::string database = kDefaultDatabase;
  std::string out = "report.html";
  std::string op;
  std::string since;
};

int run_report(const ReportOptions& options) {
  refuse_output_over_database("report", options.out, options.database);
  app::QueryRequest request;  // the records query would choose
  request.op = options.op;
  if (!options.since.empty()) request.since = app::parse_since(options.since, "report");
  const db::RecordFilter filter = app::record_filter(request);
  auto database = open_database(options.database, db::Database::Mode::kReadOnly);
  const tuner::HtmlReport report = tuner::html_report(database, options.database, filter);
  try {
    tuner::write_if_changed(options.out, report.page);
  } catch (const std::runtime_error& error) {
    throw UsageError("report: " + std::string(error.what()));
  }
  std::printf("%s: report of %s in %s of %s\n", options.out.c_str(), tuner::counted(report.records, "record").c_str(),
              tuner::counted(report.tasks, "task").c_str(), options.database.c_str());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* report = app.add_subcommand("report", "Write an HTML report: every trial per task, default vs tuned");
  add_database_option(*report, options->database, "only read");
  report->add_option("--out", options->out, "HTML file to write")->capture_default_str();
  report->add_option("--op", options->op, "Only this operator");
  add_since_option(*report, options->since);
  report->callback([options, &action] { action = [options] { return run_report(*options); }; });
}

}  // namespace optune::cli
