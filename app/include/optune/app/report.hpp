// The HTML report of a database (`optune report`): one self-contained page, per task every record
// against its trial number with the best so far and the default config's figure, failures by kind,
// a table of default against tuned (tuner/results/html_report.hpp), for the records `query` would
// choose with the same --op and --since.
#pragma once

#include <cstddef>
#include <string>

namespace optune::app {

struct ReportRequest {
  std::string database;
  std::string out;    // the page, rewritten only when its text changes
  std::string op;     // "" every operator
  std::string since;  // "" every record; a date or a duration back from now (parse_since)
};

struct ReportOutcome {
  std::size_t records = 0;
  std::size_t tasks = 0;
};

// BadInput for a malformed --since, a database that is not one, or a page that cannot be written.
ReportOutcome write_report(const ReportRequest& request);

}  // namespace optune::app
