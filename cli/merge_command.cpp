// optune merge: joins the records of two databases (e.g. tuned on two machines, or two nights of
// one job). Records already present (same content hash) are dropped, so nothing is counted twice
// and nothing is lost; merging the same file again adds nothing.
#include <cstdio>

#include "cli_support.hpp"
#include "optune/app/output_text.hpp"
#include "optune/app/record_transfer.hpp"

namespace optune::cli {
namespace {

struct MergeOptions {
  std::string first;
  std::string second;
  std::string into;  // "" = into the first database
};

int run_merge(const MergeOptions& options) {
  const app::MergeOutcome merged = app::merge_databases(options.first, options.second, options.into);
  if (options.into.empty())
    std::printf("merged %s from %s into %s (%s)\n", app::counted(merged.from_second, "new record").c_str(),
                options.second.c_str(), options.first.c_str(), app::counted(merged.records, "record").c_str());
  else
    std::printf("merged %s from %s and %zu from %s into %s (%s)\n",
                app::counted(merged.from_first, "new record").c_str(), options.first.c_str(), merged.from_second,
                options.second.c_str(), options.into.c_str(), app::counted(merged.records, "record").c_str());
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<MergeOptions>();
  CLI::App* merge = app.add_subcommand("merge", "Merge the records of database B into A (or both into --into OUT)");
  merge->add_option("A", options->first, "Database merged into (read only with --into)")->required();
  merge->add_option("B", options->second, "Database whose records are added (read only)")->required();
  merge->add_option("--into", options->into, "Write both into this database (created when missing) instead of A");
  merge->callback([options, &action] { action = [options] { return run_merge(*options); }; });
}

}  // namespace optune::cli
