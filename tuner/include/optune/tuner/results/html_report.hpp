// The HTML report of a database (`optune report`): one self-contained page (inline SVG and CSS, no
// script, nothing fetched), readable from a file without a server. A table of every task
// (workload, template, target, device) with its default and tuned figures, then per task a plot
// of every record against its trial number with the best so far and the default config's figure,
// the records that are not ok counted by error kind, and why the headline best differs from what
// its trial measured where it does (re-measured at the end of its run); then each measured
// dispatch.
#pragma once

#include <cstddef>
#include <string>

#include "optune/db/database.hpp"

namespace optune::tuner {

struct HtmlReport {
  std::string page;
  std::size_t records = 0;  // shown: those the filter chose that pass their check
  std::size_t tasks = 0;
};

// `source` names the database in the page's heading. `filter` chooses the records shown (its op
// and since, as query reads them); the page says which it chose.
HtmlReport html_report(const db::Database& database, const std::string& source, const db::RecordFilter& filter = {});

}  // namespace optune::tuner
