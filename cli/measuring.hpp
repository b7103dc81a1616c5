// The measuring parts of a command that measures (tune, job run, regress): the library's
// (optune/app/measuring.hpp), made with this installation's paths and with the RPC runner's lines
// going to stderr.
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/run_locks.hpp"
#include "optune/measure/measure_result.hpp"
#include "rpc_support.hpp"

namespace optune::cli {

using app::MeasureSettings;
using app::Remote;
using app::find_remote;

using app::RunLocks;

// lock_for_measuring with its waiting line on stderr.
RunLocks lock_for_measuring(const std::string& who, const std::string& database_path,
                            const kernels::DeviceInfo& device, bool wait_for_device, bool writes_records);
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

struct Measuring : app::Measuring {
  explicit Measuring(const MeasureSettings& settings, const std::optional<Remote>& remote = std::nullopt);
};

}  // namespace optune::cli
