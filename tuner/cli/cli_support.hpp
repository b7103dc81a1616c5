// What the subcommands share: how an action is registered, bad-input errors (exit code 2), and
// turning command-line text into the typed task, database and measurement parts.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "optune/db/database.hpp"
#include "optune/measure/measure_input.hpp"
#include "optune/tuner/suite.hpp"

namespace optune::cli {

// A subcommand's work, run after parsing; returns the exit code.
using CommandAction = std::function<int()>;

// Bad usage or bad input: one line on stderr, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void add_tune_command(CLI::App& app, CommandAction& action);
void add_query_command(CLI::App& app, CommandAction& action);
void add_space_command(CLI::App& app, CommandAction& action);
void add_devices_command(CLI::App& app, CommandAction& action);
void add_transfer_commands(CLI::App& app, CommandAction& action);  // export, import
void add_apply_best_command(CLI::App& app, CommandAction& action);
void add_rpc_commands(CLI::App& app, CommandAction& action);  // rpc server, tracker, proxy, status
void add_job_command(CLI::App& app, CommandAction& action);
void add_merge_command(CLI::App& app, CommandAction& action);
void add_prune_command(CLI::App& app, CommandAction& action);
void add_regress_command(CLI::App& app, CommandAction& action);
void add_report_command(CLI::App& app, CommandAction& action);
void add_replay_command(CLI::App& app, CommandAction& action);

inline constexpr const char* kDefaultDatabase = "optune.db";

// The task of one (op, shape, target) on this machine's device; throws UsageError.
// `workload` given: that workload instead of parsing op and shape (suite entries).
// `device` given: that (remote) device instead of this machine's.
std::shared_ptr<measure::MeasureTask> make_task(const std::string& op, const std::string& shape,
                                                const std::string& target,
                                                const kernels::Workload* workload = nullptr,
                                                const kernels::DeviceInfo* device = nullptr);
db::Database open_database(const std::string& path, db::Database::Mode mode);

// The suite of `--suite PATH`, with `--layout NAME` (empty: the file's own) replacing its
// suite-level layout; throws UsageError naming the file, line and problem, or the bad layout.
tuner::Suite load_suite_option(const std::string& path, const std::string& layout);
// Registers `--layout` for commands that take `--suite`.
void add_layout_option(CLI::App& command, std::string& layout);

// Where the installed or built optune finds its worker and the kernel headers candidates include.
std::string worker_path();
std::vector<std::string> kernel_include_dirs();
// The OpenCL kernels' .cl files (share/optune/opencl when installed), and where compiled OpenCL
// programs are cached (opencl::default_program_cache_dir(): the folder applications use too).
std::string opencl_kernel_dir();
std::string opencl_cache_dir();

}  // namespace optune::cli
