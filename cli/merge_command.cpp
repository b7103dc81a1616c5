// optune merge: joins the records of two databases (e.g. tuned on two machines, or two nights of
// one job). Records already present (same content hash) are dropped, so nothing is counted twice
// and nothing is lost; merging the same file again adds nothing.
#include <cstdio>
#include <filesystem>

#include "cli_support.hpp"
#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/search/record_check.hpp"

namespace optune::cli {
namespace {

struct MergeOptions {
  std::string first;
  std::string second;
  std::string into;  // "" = into the first database
};

// Records the tuner would not have written (RecordCheck) are refused, as import refuses them,
// before anything is written: "record N of FILE: ...", N counting from 1, oldest first.
void check_records(const db::Database& database) {
  tuner::RecordCheck check;
  std::size_t number = 0;
  for (const auto& record : database.records({})) {
    ++number;
    try {
      check.full(record);
    } catch (const std::invalid_argument& error) {
      throw UsageError("merge: record " + std::to_string(number) + " of " + database.path() + ": " + error.what());
    }
  }
}

int run_merge(const MergeOptions& options) {
  namespace fs = std::filesystem;
  // The same file twice would only read what it writes; say so instead of "0 new records".
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code error;
    return fs::weakly_canonical(a, error) == fs::weakly_canonical(b, error);
  };
  if (same(options.first, options.second))
    throw UsageError("merge: " + options.first + " and " + options.second + " are the same database");
  auto second = open_database(options.second, db::Database::Mode::kReadOnly);
  check_records(second);
  if (options.into.empty()) {
    auto first = open_database(options.first, db::Database::Mode::kReadWrite);
    std::size_t added = first.merge_from(second);
    std::printf("merged %s from %s into %s (%s)\n", tuner::counted(added, "new record").c_str(),
                options.second.c_str(), options.first.c_str(), tuner::counted(first.count(), "record").c_str());
    return 0;
  }
  if (same(options.into, options.first) || same(options.into, options.second))
    throw UsageError("merge: --into " + options.into + " is one of the inputs; leave --into out to merge in place");
  auto first = open_database(options.first, db::Database::Mode::kReadOnly);
  check_records(first);
  auto out = open_database(options.into, db::Database::Mode::kReadWrite);
  std::size_t from_first = out.merge_from(first);
  std::size_t from_second = out.merge_from(second);
  std::printf("merged %s from %s and %zu from %s into %s (%s)\n", tuner::counted(from_first, "new record").c_str(),
              options.first.c_str(), from_second, options.second.c_str(), options.into.c_str(),
              tuner::counted(out.count(), "record").c_str());
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
