#include "optune/app/report.hpp"

#include "optune/app/bad_input.hpp"
#include "optune/app/query.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/results/html_report.hpp"
#include "optune/tuner/results/tuned_header.hpp"

namespace optune::app {

ReportOutcome write_report(const ReportRequest& request) {
  QueryRequest query;  // the records query would choose
  query.op = request.op;
  if (!request.since.empty()) query.since = parse_since(request.since, "report");
  const db::RecordFilter filter = record_filter(query);
  auto database = open_database(request.database, db::Database::Mode::kReadOnly);
  const tuner::HtmlReport report = tuner::html_report(database, request.database, filter);
  try {
    tuner::write_if_changed(request.out, report.page);
  } catch (const std::runtime_error& error) {
    throw BadInput("report: " + std::string(error.what()));
  }
  return {report.records, report.tasks};
}

}  // namespace optune::app
