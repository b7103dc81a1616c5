// The JSON form of a record: one line of an export.
#include <gtest/gtest.h>

#include "db_test_support.hpp"

namespace optune::db {
namespace {

std::string rejection(const nlohmann::json& json) {
  try {
    record_from_json(json);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(RecordJson, RoundTripsEveryFieldButId) {
  TuningRecord record = testing::failed_record(8, "transport_error");
  record.id = 17;
  record.is_default = true;
  record.toolchain = {{"compiler", "clang version 14.0.6"}, {"flags", "-O3"}};
  const nlohmann::json json = to_json(record);
  EXPECT_FALSE(json.contains("id"));
  const TuningRecord back = record_from_json(json);
  EXPECT_EQ(back.id, 0);
  EXPECT_EQ(to_json(back), json);
  EXPECT_EQ(back.error_kind, "transport_error");
  EXPECT_TRUE(back.is_default);
  EXPECT_EQ(back.toolchain, record.toolchain);
  // Unknown (a record of schema 5 or older): no field, so its line and content hash stay as they were.
  EXPECT_FALSE(to_json(testing::ok_record(8, 0.005)).contains("toolchain"));
}

TEST(RecordJson, OptionalFieldsDefault) {
  const TuningRecord record = record_from_json({{"workload_key", "gemm.f32.M8.N8.K8"},
                                                {"template_name", "cpu_gemm"},
                                                {"target", "cpu"},
                                                {"device_id", "dev0001"},
                                                {"config", nlohmann::json::object()},
                                                {"error_kind", "ok"}});
  EXPECT_TRUE(record.costs.empty());
  EXPECT_EQ(record.median_seconds, 0);
  EXPECT_FALSE(record.is_default);
}

TEST(RecordJson, RejectionNamesTheField) {
  const nlohmann::json good = to_json(testing::ok_record(8, 0.005));
  const auto without = [&good](const char* field) {
    nlohmann::json json = good;
    json.erase(field);
    return json;
  };
  const auto with = [&good](const char* field, nlohmann::json value) {
    nlohmann::json json = good;
    json[field] = std::move(value);
    return json;
  };
  EXPECT_EQ(rejection(without("workload_key")), "missing field \"workload_key\"");
  EXPECT_EQ(rejection(without("config")), "missing field \"config\"");
  EXPECT_EQ(rejection(with("config", "tile_m=8")), "field \"config\" must be an object (knob name -> value)");
  EXPECT_EQ(rejection(with("costs", {0.1, "x"})), "field \"costs\" must be an array of numbers");
  EXPECT_EQ(rejection(with("gflops", nullptr)), "field \"gflops\" must be a number");
  EXPECT_EQ(rejection(with("is_default", 1)), "field \"is_default\" must be true or false");
  EXPECT_EQ(rejection(with("target", "")), "field \"target\" must be a non-empty string");
  EXPECT_EQ(rejection(with("run_id", 7)), "field \"run_id\" must be a string");
  EXPECT_EQ(rejection(nlohmann::json::array()), "a record must be a JSON object");
  EXPECT_EQ(rejection(with("toolchain", "gcc")), "field \"toolchain\" must be an object (compiler, flags)");
  EXPECT_EQ(rejection(with("toolchain", {{"compiler", 12}})), "field \"toolchain\" must be an object of strings");
}

}  // namespace
}  // namespace optune::db
