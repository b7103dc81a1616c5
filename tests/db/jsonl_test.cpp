// Export and import as JSON lines: the way records move between machines (merge).
#include <gtest/gtest.h>

#include <sstream>

#include "db_test_support.hpp"

namespace optune::db {
namespace {

using testing::ok_record;
using testing::failed_record;
using testing::content;

class Jsonl : public testing::OnEachEngine {};
INSTANTIATE_ENGINES(Jsonl);

std::vector<nlohmann::json> contents(const std::vector<TuningRecord>& records) {
  std::vector<nlohmann::json> result;
  for (const auto& record : records) result.push_back(content(record));
  return result;
}

std::vector<TuningRecord> sample_records() {
  TuningRecord gpu = ok_record(4, 0.0001, 1500);
  gpu.target = "opencl";
  gpu.device_id = "dev0002";
  gpu.device_fingerprint = testing::fingerprint("NVIDIA GeForce RTX 4090");
  return {ok_record(8, 0.005, 1000), failed_record(16, "wrong_answer", 2000), ok_record(32, 1.0 / 3.0, 3000), gpu};
}

TEST_P(Jsonl, ExportThenImportGivesIdenticalRecords) {
  auto source = Database::open(at("source.db"));
  source.insert(sample_records());
  std::stringstream lines;
  EXPECT_EQ(source.export_jsonl(lines, {}).records, 4u);

  auto target = Database::open(at("target.db"));
  EXPECT_EQ(target.import_jsonl(lines).records, 4u);
  EXPECT_EQ(contents(target.records({})), contents(source.records({})));
}

TEST_P(Jsonl, ExportHonoursFilter) {
  auto db = Database::open(at("optune.db"));
  db.insert(sample_records());
  std::stringstream lines;
  EXPECT_EQ(db.export_jsonl(lines, {.target = "opencl"}).records, 1u);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(record_from_json(nlohmann::json::parse(line)).device_id, "dev0002");
}

TEST_P(Jsonl, ImportingTwiceAddsNothing) {
  auto source = Database::open(at("source.db"));
  source.insert(sample_records());
  std::stringstream lines;
  source.export_jsonl(lines, {});
  const std::string text = lines.str();

  std::istringstream into_source(text);
  EXPECT_EQ(source.import_jsonl(into_source).records, 0u);
  auto target = Database::open(at("target.db"));
  std::istringstream first(text), second(text);
  EXPECT_EQ(target.import_jsonl(first).records, 4u);
  EXPECT_EQ(target.import_jsonl(second).records, 0u);
  EXPECT_EQ(target.count(), 4u);
}

TEST_P(Jsonl, MalformedLineIsRejectedWithItsNumberAndNothingIsKept) {
  auto db = Database::open(at("optune.db"));
  db.insert({ok_record(64, 0.009)});
  const auto before = contents(db.records({}));

  const auto records = sample_records();
  nlohmann::json mistyped = to_json(records[2]);
  mistyped["median_seconds"] = "fast";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"workload_key\": ", "line 3: not valid JSON"},
      {mistyped.dump(), "line 3: field \"median_seconds\" must be a number"},
      {"{\"workload_key\": \"gemm.f32.M1.N1.K1\"}", "line 3: missing field \"template_name\""},
      {"[1, 2]", "line 3: a record must be a JSON object"},
  };
  for (const auto& [bad_line, expected] : cases) {
    std::istringstream lines(to_json(records[0]).dump() + "\n\n" + bad_line + "\n" + to_json(records[1]).dump() + "\n");
    try {
      db.import_jsonl(lines);
      ADD_FAILURE() << "accepted: " << bad_line;
    } catch (const DatabaseError& error) {
      EXPECT_EQ(std::string(error.what()).rfind(expected, 0), 0u) << error.what();
    }
    EXPECT_EQ(contents(db.records({})), before);
  }
}

// A dispatch rule of the exported records' device travels with them: one line after the records,
// stored once however often it is imported; a filter on another target or on one workload leaves
// it out; a malformed rule line rejects the whole import.
DispatchRecord rule_for(const std::string& device_id) {
  return DispatchRecord{0, "gemm.cpu", "cpu", device_id, "gemm.f32.M1.N8.K8", "gemm.f32.M64.N8.K8",
                        nlohmann::json{{"configs", nlohmann::json::array()}}, 1500, "0.1.0"};
}

TEST_P(Jsonl, DispatchRulesTravelWithTheirDevicesRecords) {
  auto source = Database::open(at("source.db"));
  const auto records = sample_records();
  source.insert(records);
  source.insert_dispatch(rule_for(records[0].device_id));
  source.insert_dispatch(rule_for("a-device-with-no-records"));
  std::stringstream lines;
  const auto written = source.export_jsonl(lines, {});
  EXPECT_EQ(written.records, 4u);
  EXPECT_EQ(written.dispatch_rules, 1u);
  const std::string text = lines.str();

  auto target = Database::open(at("target.db"));
  std::istringstream first(text), second(text);
  const auto added = target.import_jsonl(first);
  EXPECT_EQ(added.records, 4u);
  EXPECT_EQ(added.dispatch_rules, 1u);
  EXPECT_EQ(target.import_jsonl(second).dispatch_rules, 0u);
  const auto imported = target.dispatches("", "");
  ASSERT_EQ(imported.size(), 1u);
  const auto expected = rule_for(records[0].device_id);
  EXPECT_EQ(imported[0].device_id, expected.device_id);
  EXPECT_EQ(imported[0].low_key, expected.low_key);
  EXPECT_EQ(imported[0].rule, expected.rule);
  EXPECT_EQ(imported[0].timestamp, expected.timestamp);

  std::stringstream none;
  EXPECT_EQ(source.export_jsonl(none, {.target = "opencl"}).dispatch_rules, 0u);
  EXPECT_EQ(source.export_jsonl(none, {.workload_key = records[0].workload_key}).dispatch_rules, 0u);

  int rejected = 0;
  auto check = [&rejected](const DispatchRecord&) {
    ++rejected;
    throw std::invalid_argument("unreadable rule");
  };
  auto checked = Database::open(at("checked.db"));
  std::istringstream third(text);
  try {
    checked.import_jsonl(third, {}, check);
    ADD_FAILURE() << "a rejected rule was imported";
  } catch (const DatabaseError& error) {
    EXPECT_EQ(std::string(error.what()), "line 5: unreadable rule");
  }
  EXPECT_EQ(rejected, 1);
  EXPECT_EQ(checked.count(), 0u) << "nothing of a rejected import is kept";
  for (const std::string bad : {R"({"dispatch_rule": {"template": "gemm.cpu"}})", R"({"dispatch_rule": 3})"}) {
    std::istringstream malformed(bad + "\n");
    EXPECT_THROW(checked.import_jsonl(malformed), DatabaseError) << bad;
  }
  EXPECT_TRUE(checked.dispatches("", "").empty());
}

}  // namespace
}  // namespace optune::db
