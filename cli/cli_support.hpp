// What the subcommands share: how an action is registered, bad-input errors (exit code 2), and
// turning command-line text into the typed task, database and measurement parts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "optune/app/bad_input.hpp"
#include "optune/app/describe.hpp"
#include "optune/app/install_paths.hpp"
#include "optune/app/tasks.hpp"
#include "optune/app/tuning.hpp"

namespace optune::cli {

// A subcommand's work, run after parsing; returns the exit code.
using CommandAction = std::function<int()>;

// Bad usage or bad input: one line on stderr, exit code 2.
using UsageError = app::BadInput;

void add_tune_command(CLI::App& app, CommandAction& action);
void add_query_command(CLI::App& app, CommandAction& action);
void add_space_command(CLI::App& app, CommandAction& action);
void add_devices_command(CLI::App& app, CommandAction& action);
void add_transfer_commands(CLI::App& app, CommandAction& action);  // export, import
void add_apply_best_command(CLI::App& app, CommandAction& action);
void add_pick_command(CLI::App& app, CommandAction& action);
void add_rpc_commands(CLI::App& app, CommandAction& action);  // rpc server, tracker, proxy, status
void add_job_command(CLI::App& app, CommandAction& action);
void add_merge_command(CLI::App& app, CommandAction& action);
void add_prune_command(CLI::App& app, CommandAction& action);
void add_regress_command(CLI::App& app, CommandAction& action);
void add_revalidate_command(CLI::App& app, CommandAction& action);
void add_measure_command(CLI::App& app, CommandAction& action);
void add_dispatch_command(CLI::App& app, CommandAction& action);
void add_report_command(CLI::App& app, CommandAction& action);
void add_replay_command(CLI::App& app, CommandAction& action);

using app::kDefaultDatabase;
using app::load_suite_option;
using app::make_entry_task;
using app::make_task;
using app::open_database;

// A command's --out naming its own database (or a link to it) would overwrite the records it reads:
// refused as bad input before anything is opened.
void refuse_output_over_database(const std::string& command, const std::string& out, const std::string& database);

// Registers `--db`: a SQLite file, or a PostgreSQL server (a libpq URI or keyword string). `note`
// says what the command does with it ("only read"), where that needs saying.
void add_database_option(CLI::App& command, std::string& database, const std::string& note = "");

// Registers `--since` (a date or a duration back from now, app::parse_since reads it) for the
// commands that read records (query, report).
void add_since_option(CLI::App& command, std::string& since);

// Registers `--layout` for commands that take `--suite`.
void add_layout_option(CLI::App& command, std::string& layout);
// Registers `--dtype` (f32, f16, bf16, i8: the operands' type) for a command's `--shape`, which
// takes it as its `dtype=` item ("512,512,512,dtype=bf16"), so that every reader of shapes sees one
// form. Register it after `--shape`: CLI11 runs option callbacks in the order they were added.
// `suite_dtype` (tune): where no --shape is given, the dtype goes there, for a suite's workloads.
void add_dtype_option(CLI::App& command, std::string& shape, std::string* suite_dtype = nullptr);

// Numbers on the command line are checked as text, before CLI11 converts them: CLI11 2.1 reads
// "-5" into an unsigned option as 2^64 - 5, saturates a number too large for its type, reads
// "010" as octal, and lets NaN through CLI::Range (every comparison with NaN is false).
// A whole number in decimal digits ("010" is ten) from `low` to `high`.
CLI::Validator whole_number(std::int64_t low, std::int64_t high);
// A finite number from `low` to `high`: NaN and infinities are out of every range.
CLI::Validator finite_number(double low, double high);
// Gives every numeric option of `app` and its subcommands that has no range of its own the check
// of its type (INT: any int64, UINT: no sign, FLOAT: finite), so that no option is left to wrap.
// Called once every command is registered.
void check_numeric_options(CLI::App& app);

// Where this optune finds its worker, the kernel headers candidates include, the device kernels'
// sources, the target descriptions (installed beside the executable, else this build's source
// tree), and where the worker caches the programs it compiles: $OPTUNE_CACHE_DIR, else
// $XDG_CACHE_HOME/optune/opencl, else ~/.cache/optune/opencl (pass it to applications'
// runtimes to share the tuner's binaries).
app::InstallPaths install_paths();
std::string worker_path();
// Where a library call's log lines go (a lock's waiting line, the RPC runner's): stderr, "optune: ...".
std::function<void(const std::string&)> stderr_log();
std::string program_cache_dir();

}  // namespace optune::cli
