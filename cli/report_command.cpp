// optune report: writes one self-contained HTML page of a database (per task, every record against
// its trial number with the best so far and the default config's figure, failures by kind; a
// table of default vs tuned), to open from a file or a CI artefact without a server.
#include <cstdio>

#include "cli_support.hpp"
#include "optune/app/output_text.hpp"
#include "optune/app/report.hpp"

namespace optune::cli {
namespace {

int run_report(const app::ReportRequest& request) {
  refuse_output_over_database("report", request.out, request.database);
  const app::ReportOutcome report = app::write_report(request);
  std::printf("%s: report of %s in %s of %s\n", request.out.c_str(), app::counted(report.records, "record").c_str(),
              app::counted(report.tasks, "task").c_str(), request.database.c_str());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<app::ReportRequest>();
  options->database = kDefaultDatabase;
  options->out = "report.html";
  CLI::App* report = app.add_subcommand("report", "Write an HTML report: every trial per task, default vs tuned");
  add_database_option(*report, options->database, "only read");
  report->add_option("--out", options->out, "HTML file to write")->capture_default_str();
  report->add_option("--op", options->op, "Only this operator");
  add_since_option(*report, options->since);
  report->callback([options, &action] { action = [options] { return run_report(*options); }; });
}

}  // namespace optune::cli
