// The HTML report of a database (`optune report`): one self-contained page, readable from a file
// without a server. A table of every task (workload, template, target, device) with its default
// and tuned figures, then per task a plot of best GFLOP/s so far against trial, one line per
// tuning run, drawn as inline SVG.
#pragma once

#include <string>

#include "optune/db/database.hpp"

namespace optune::tuner {

// `source` names the database in the page's heading.
std::string html_report(const db::Database& database, const std::string& source);

}  // namespace optune::tuner
