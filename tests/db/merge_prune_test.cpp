// Database::merge_from and Database::prune: overlapping databases merge without duplicates or
// losses; prune keeps the best K per task, the latest default and the latest record of each
// failed config, and nothing else.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "db_test_support.hpp"

namespace optune::db {
namespace {

using testing::failed_record;
using testing::ok_record;

class MergeTest : public testing::OnEachEngine {};
INSTANTIATE_ENGINES(MergeTest);
class PruneTest : public testing::OnEachEngine {};
INSTANTIATE_ENGINES(PruneTest);

std::multiset<std::string> contents(const Database& database) {
  std::multiset<std::string> all;
  for (const auto& record : database.records(RecordFilter{})) all.insert(to_json(record).dump());
  return all;
}

TEST_P(MergeTest, OverlappingDatabasesMergeWithoutDuplicatesOrLosses) {
  auto a = Database::open(at("a.db"));
  auto b = Database::open(at("b.db"));
  const TuningRecord shared = ok_record(4, 0.002);
  a.insert({shared, ok_record(8, 0.003), failed_record(16, "crash")});
  b.insert({shared, ok_record(32, 0.001, 2000), failed_record(64, "timeout", 2000)});

  EXPECT_EQ(a.merge_from(b), 2u);  // the shared record is dropped
  EXPECT_EQ(a.count(), 5u);
  // Every record of both is in a, each exactly once.
  auto merged = contents(a);
  for (const auto& line : contents(b)) EXPECT_EQ(merged.count(line), 1u) << line;
  EXPECT_EQ(std::set<std::string>(merged.begin(), merged.end()).size(), merged.size());

  EXPECT_EQ(a.merge_from(b), 0u);  // merging again adds nothing
  EXPECT_EQ(a.count(), 5u);
  EXPECT_EQ(a.best(testing::kGemmTask)->median_seconds, 0.001);
  EXPECT_EQ(a.integrity_check(), "ok");
}

TEST_P(MergeTest, MergeIntoReadOnlyDatabaseIsRefused) {
  { Database::open(at("a.db")).insert({ok_record(4, 0.002)}); }
  auto a = Database::open(at("a.db"), Database::Mode::kReadOnly);
  auto b = Database::open(at("b.db"));
  EXPECT_THROW(a.merge_from(b), DatabaseError);
}

TEST_P(PruneTest, KeepsBestKLatestDefaultAndLatestRecordOfEachFailedConfig) {
  auto database = Database::open(at("p.db"));
  std::vector<TuningRecord> records;
  for (int i = 0; i < 6; ++i) records.push_back(ok_record(i + 1, 0.001 * (i + 1), 1000 + i));
  TuningRecord old_default = ok_record(100, 0.01, 900);
  old_default.is_default = true;
  old_default.tuner = "default";
  TuningRecord new_default = old_default;
  new_default.timestamp = 1900;
  new_default.run_id = "run-2";
  records.push_back(old_default);
  records.push_back(new_default);
  records.push_back(failed_record(200, "crash", 1100));
  records.push_back(failed_record(200, "crash", 1200));  // the same config failing again
  records.push_back(failed_record(300, "timeout", 1300));
  // Another task (other device): pruned on its own.
  TuningRecord other = ok_record(1, 0.5, 1000);
  other.device_id = "dev0002";
  records.push_back(other);
  database.insert(records);
  ASSERT_EQ(database.count(), 12u);

  EXPECT_EQ(database.prune(2, /*dry_run=*/true), 6u);
  EXPECT_EQ(database.count(), 12u);  // a dry run deletes nothing

  EXPECT_EQ(database.prune(2), 6u);
  database.compact();
  std::vector<std::string> kept;
  for (const auto& r : database.records(RecordFilter{}))
    kept.push_back(r.device_id + ":" + r.error_kind + ":" + std::to_string(r.config["tile_m"].get<int>()) + "@" +
                   std::to_string(static_cast<int>(r.timestamp)));
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"dev0001:crash:200@1200", "dev0001:ok:100@1900", "dev0001:ok:1@1000",
                                            "dev0001:ok:2@1001", "dev0001:timeout:300@1300", "dev0002:ok:1@1000"}));
  EXPECT_EQ(database.integrity_check(), "ok");
  EXPECT_EQ(database.prune(2), 0u);  // already pruned
}

// The default config measured again later as a candidate (the closing re-measure), slower: prune
// keeps that latest record, so the best stays the best (dropping it left the default's older,
// faster record as its latest, which outranked the best after a prune).
TEST_P(PruneTest, TheBestStaysTheBestWhenTheDefaultWasMeasuredAgainSlower) {
  auto database = Database::open(at("p.db"));
  TuningRecord fast_default = ok_record(100, 0.001, 1000);
  fast_default.is_default = true;
  fast_default.tuner = "default";
  TuningRecord slow_again = ok_record(100, 0.004, 1500);  // the same config, not flagged default
  database.insert({fast_default, ok_record(1, 0.002, 1100), ok_record(2, 0.003, 1200), slow_again});
  ASSERT_EQ(database.best(testing::kGemmTask)->config["tile_m"].get<int>(), 1);
  EXPECT_EQ(database.prune(1), 1u);  // config 2's record
  EXPECT_EQ(database.best(testing::kGemmTask)->config["tile_m"].get<int>(), 1);
  EXPECT_EQ(database.top_k({}, 1).at(0).config["tile_m"].get<int>(), 1);
  EXPECT_EQ(database.count(), 3u);
}

}  // namespace
}  // namespace optune::db
