// optune: the command line (DESIGN.md). Exit codes: 0 ok, 1 the task failed (e.g. a regression),
// 2 bad usage or bad input, with one line on stderr naming what was wrong.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_support.hpp"
#include "optune/app/describe.hpp"
#include "optune/app/failure.hpp"

namespace {

using optune::app::one_line;  // an error is one line on stderr, whatever it quotes

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"optune: auto-tuner for operator schedules (" + optune::app::operator_names() +
               "); targets: " + optune::app::target_forms()};
  app.set_version_flag("--version", std::string("optune ") + OPTUNE_VERSION);
  app.require_subcommand(1);
  optune::cli::CommandAction action;
  optune::cli::add_tune_command(app, action);
  optune::cli::add_query_command(app, action);
  optune::cli::add_space_command(app, action);
  optune::cli::add_devices_command(app, action);
  optune::cli::add_transfer_commands(app, action);
  optune::cli::add_apply_best_command(app, action);
  optune::cli::add_pick_command(app, action);
  optune::cli::add_measure_command(app, action);
  optune::cli::add_dispatch_command(app, action);
  optune::cli::add_rpc_commands(app, action);
  optune::cli::add_job_command(app, action);
  optune::cli::add_merge_command(app, action);
  optune::cli::add_prune_command(app, action);
  optune::cli::add_regress_command(app, action);
  optune::cli::add_revalidate_command(app, action);
  optune::cli::add_report_command(app, action);
  optune::cli::add_replay_command(app, action);
  optune::cli::check_numeric_options(app);
  auto is_subcommand = [&](const std::string& name) {
    for (const CLI::App* sub : app.get_subcommands({})) if (sub->get_name() == name) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(argv[1])) {
    std::fprintf(stderr, "optune: error: unknown subcommand '%s' (see optune --help)\n", one_line(argv[1]).c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "optune: error: %s (see optune --help)\n", one_line(error.what()).c_str());
    return 2;
  }
  try {
    return action ? action() : 0;
  } catch (const std::exception& error) {
    const bool bad_input = optune::app::failure_kind(error) == optune::app::FailureKind::kBadInput;
    std::fprintf(stderr, "optune: %s: %s\n", bad_input ? "error" : "failed", one_line(error.what()).c_str());
    return bad_input ? 2 : 1;
  }
}
