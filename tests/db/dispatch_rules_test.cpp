// The dispatch_rules table (schema 7) on each engine: a rule reads back as stored, the latest of a
// range, target and device is the one in force, identical rules are stored once, merge carries
// them, and a file of schema 6 opened read-only shows none.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db_test_support.hpp"

namespace optune::db {
namespace {

class DispatchRules : public testing::OnEachEngine {};
INSTANTIATE_ENGINES(DispatchRules);

DispatchRecord rule_of(const std::string& low, const std::string& high, double timestamp, int tile,
                       const std::string& device_id = "dev-a") {
  return DispatchRecord{0, "gemm.cpu", "cpu", device_id, low, high,
                        nlohmann::json{{"configs", {{{"config", {{"tile", tile}}}, {"from", low}}}}},
                        timestamp, "0.1.0"};
}

const std::string kLow = "gemm.f32.M1.N64.K64", kHigh = "gemm.f32.M512.N64.K64";

TEST_P(DispatchRules, LatestRuleOfARangeIsInForceAndIdenticalOnesAreStoredOnce) {
  auto database = Database::open(at("rules.db"));
  EXPECT_GT(database.insert_dispatch(rule_of(kLow, kHigh, 1000, 8)), 0);
  EXPECT_GT(database.insert_dispatch(rule_of(kLow, kHigh, 2000, 16)), 0);
  EXPECT_EQ(database.insert_dispatch(rule_of(kLow, kHigh, 2000, 16)), 0);  // the same again
  EXPECT_GT(database.insert_dispatch(rule_of(kLow, "gemm.f32.M64.N64.K64", 1500, 4)), 0);  // another range
  EXPECT_GT(database.insert_dispatch(rule_of(kLow, kHigh, 3000, 32, "dev-b")), 0);          // another device

  auto in_force = database.dispatches("cpu", "dev-a");
  ASSERT_EQ(in_force.size(), 2u);
  EXPECT_EQ(in_force[0].high_key, kHigh);  // newest first
  EXPECT_EQ(in_force[0].rule, rule_of(kLow, kHigh, 2000, 16).rule);
  EXPECT_EQ(in_force[0].timestamp, 2000);
  EXPECT_EQ(in_force[0].template_name, "gemm.cpu");
  EXPECT_EQ(in_force[0].optune_version, "0.1.0");
  EXPECT_EQ(in_force[1].high_key, "gemm.f32.M64.N64.K64");
  EXPECT_EQ(database.dispatches("", "").size(), 3u);
  EXPECT_TRUE(database.dispatches("opencl", "").empty());
  EXPECT_THROW(database.insert_dispatch(rule_of("", kHigh, 1, 1)), DatabaseError);
}

TEST_P(DispatchRules, MergeCarriesRulesOnce) {
  auto a = Database::open(at("a.db"));
  auto b = Database::open(at("b.db"));
  a.insert_dispatch(rule_of(kLow, kHigh, 1000, 8));
  b.insert_dispatch(rule_of(kLow, kHigh, 1000, 8));
  b.insert_dispatch(rule_of(kLow, kHigh, 2000, 16));
  a.merge_from(b);
  a.merge_from(b);
  auto in_force = a.dispatches("cpu", "");
  ASSERT_EQ(in_force.size(), 1u);
  EXPECT_EQ(in_force[0].timestamp, 2000);
}

TEST(DispatchRulesFile, AnOlderFileReadOnlyShowsNoRulesAndMigratesOnWrite) {
  testing::TempDir dir;
  const std::string path = dir.file("old.db");
  Database::open(path).insert_dispatch(rule_of(kLow, kHigh, 1000, 8));
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
  // What schema 6 had: no dispatch_rules (7), no check_error (8).
  ASSERT_EQ(sqlite3_exec(handle, "DROP TABLE dispatch_rules; ALTER TABLE records DROP COLUMN check_error;"
                                 " PRAGMA user_version = 6",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(handle);
  EXPECT_TRUE(Database::open(path, Database::Mode::kReadOnly).dispatches("", "").empty());
  auto writer = Database::open(path);
  EXPECT_EQ(writer.schema_version(), kSchemaVersion);
  EXPECT_GT(writer.insert_dispatch(rule_of(kLow, kHigh, 1000, 8)), 0);
}

}  // namespace
}  // namespace optune::db
