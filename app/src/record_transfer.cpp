#include "optune/app/record_transfer.hpp"

#include <filesystem>

#include "optune/app/bad_input.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/results/stored_dispatch.hpp"
#include "optune/tuner/search/record_check.hpp"

namespace optune::app {
namespace {

// Records the tuner would not have written are refused, as import refuses them, before anything
// is written.
void check_records(const db::Database& database) {
  tuner::RecordCheck check;
  std::size_t number = 0;
  for (const auto& record : database.records({})) {
    ++number;
    try {
      check.full(record);
    } catch (const std::invalid_argument& error) {
      throw BadInput("merge: record " + std::to_string(number) + " of " + database.path() + ": " + error.what());
    }
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::weakly_canonical(a, error) == std::filesystem::weakly_canonical(b, error);
}

}  // namespace

db::Database::JsonlCounts import_records(const std::string& path, std::istream& in) {
  auto database = open_database(path, db::Database::Mode::kReadWrite);
  tuner::RecordCheck check;
  return database.import_jsonl(in, [&check](const db::TuningRecord& record) { check.full(record); },
                               tuner::check_dispatch_record);
}

MergeOutcome merge_databases(const std::string& first_path, const std::string& second_path, const std::string& into) {
  // The same file twice would only read what it writes; say so instead of "0 new records".
  if (same_file(first_path, second_path))
    throw BadInput("merge: " + first_path + " and " + second_path + " are the same database");
  auto second = open_database(second_path, db::Database::Mode::kReadOnly);
  check_records(second);
  MergeOutcome outcome;
  if (into.empty()) {
    auto first = open_database(first_path, db::Database::Mode::kReadWrite);
    outcome.from_second = first.merge_from(second);
    outcome.records = first.count();
    return outcome;
  }
  if (same_file(into, first_path) || same_file(into, second_path))
    throw BadInput("merge: --into " + into + " is one of the inputs; leave --into out to merge in place");
  auto first = open_database(first_path, db::Database::Mode::kReadOnly);
  check_records(first);
  auto out = open_database(into, db::Database::Mode::kReadWrite);
  outcome.from_first = out.merge_from(first);
  outcome.from_second = out.merge_from(second);
  outcome.records = out.count();
  return outcome;
}

}  // namespace optune::app
