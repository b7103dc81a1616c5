// The options and table cells of the commands that measure (tune, job run, regress, measure,
// revalidate, dispatch).
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "optune/app/measuring.hpp"

namespace optune::cli {

using app::MeasureSettings;

// Registers `--wait-lock` for a command that measures.
void add_wait_lock_option(CLI::App& command, bool& wait);
// Registers the timing and building options of a command that measures (--repeat, --number,
// --min-repeat-ms, --timeout, --compile-timeout, --jobs, --compiler); `what` names what is
// measured in their help ("candidate", "config").
void add_timing_options(CLI::App& command, MeasureSettings& measuring, const std::string& what);

// A measurement's median in milliseconds ("0.1234"), its error kind where it failed, "-" for none:
// the table cells of regress and revalidate.
std::string milliseconds(const std::optional<measure::MeasureResult>& result);
// The speed-up of a successful measurement over `reference` seconds, as tune words its speed-up:
// `reference` over its median ("0.98x" where it is slower); "-" where either is missing.
std::string ratio(const std::optional<measure::MeasureResult>& now, std::optional<double> reference);

}  // namespace optune::cli
