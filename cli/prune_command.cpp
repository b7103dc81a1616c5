// optune prune: shrinks a database to what later work needs. Kept per task: the K best
// successful records, the most recent default-config record, and the most recent record of every
// failed config (so a resumed run still skips configs known to fail). Everything else goes: the
// cost model of a later run then trains on fewer records, which is the price of a small file.
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "cli_support.hpp"
#include "optune/app/output_text.hpp"
#include "optune/app/run_locks.hpp"

namespace optune::cli {
namespace {

struct PruneOptions {
  std::string database = kDefaultDatabase;
  std::size_t keep = 0;
  bool dry_run = false;
};

int run_prune(const PruneOptions& options) {
  // A dry run only reads: it neither creates a missing database nor migrates an old one.
  auto database =
      open_database(options.database, options.dry_run ? db::Database::Mode::kReadOnly : db::Database::Mode::kReadWrite);
  // Not under a run that measures into the database: it would lose its default and finalists
  // mid-run. Exit code 1, as a busy device refuses a job: the input is fine, the moment is not.
  std::optional<app::DatabaseHold> hold;
  if (!options.dry_run) {
    std::string holder;
    hold = app::lock_database_exclusively("prune", install_paths().lock_dir, options.database, holder);
    if (!hold)
      throw std::runtime_error("prune: a run (" + holder + ") is measuring into " + options.database +
                               "; nothing deleted (prune once it has ended)");
  }
  const std::size_t before = database.count();
  const std::size_t removed = database.prune(options.keep, options.dry_run);
  if (options.dry_run) {
    std::printf("would delete %zu of %s from %s (nothing deleted: --dry-run)\n", removed,
                app::counted(before, "record").c_str(), options.database.c_str());
    return 0;
  }
  if (removed > 0) database.compact();
  std::printf("deleted %zu of %s from %s; %zu kept\n", removed, app::counted(before, "record").c_str(),
              options.database.c_str(), database.count());
  return 0;
}

}  // namespace

void add_prune_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<PruneOptions>();
  CLI::App* prune = app.add_subcommand(
      "prune",
      "Keep the K best records per task, its latest default record and the latest record of each failed config");
  add_database_option(*prune, options->database);
  prune->add_option("--keep", options->keep, "Best successful records kept per task")
      ->required()->check(whole_number(1, 1'000'000));
  prune->add_flag("--dry-run", options->dry_run, "Only count what would be deleted");
  prune->callback([options, &action] { action = [options] { return run_prune(*options); }; });
}

}  // namespace optune::cli
