// Kernel Tuner cache files and a kernel file's records (tuner/interop/kernel_tuner_cache.hpp): a
// cache written here is read by the landscape reader, mapped onto a cpu kernel file's space as
// records, and written back as a cache that the same reader reads again.
#include "optune/tuner/interop/kernel_tuner_cache.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_file_template.hpp"

namespace optune::tuner {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

class KernelTunerCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("optune-kt-cache-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const char* file : {"blocks.toml", "blocks.cpp"})
      fs::copy_file(fs::path(OPTUNE_SOURCE_DIR) / "tests/data/kernels" / file, dir_ / file);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }

  // The kernel file's task on a device known by name.
  std::shared_ptr<measure::MeasureTask> task() {
    auto made = std::make_shared<measure::MeasureTask>();
    made->device.kind = "cpu";
    made->device.name = "Imported CPU";
    made->target.backend = "cpu";
    made->owned_template = backends::kernel_file_template(backends::load_kernel_file(dir_ / "blocks.toml"));
    made->kernel_template = made->owned_template.get();
    made->workload = kernels::kernel_file_of(*made->kernel_template)->workload("", made->device);
    made->space = made->kernel_template->space(made->workload, made->device);
    return made;
  }

  static Json cache(Json entries) {
    return {{"device_name", "Imported CPU"},
            {"kernel_name", "blocks"},
            {"problem_size", {1000}},
            {"tune_params_keys", {"BLOCK", "MODE"}},
            {"tune_params", {{"BLOCK", {8, 16, 32}}, {"MODE", {"plain", "fast"}}}},
            {"objective", "time"},
            {"cache", std::move(entries)}};
  }

  fs::path dir_;
};

TEST_F(KernelTunerCacheTest, TimestampsReadAndWriteAsKernelTunerWritesThem) {
  const auto seconds = parse_kernel_tuner_timestamp("2023-12-22 09:54:05.502007+00:00");
  ASSERT_TRUE(seconds);
  EXPECT_NEAR(*seconds, 1703238845.502007, 1e-6);
  EXPECT_EQ(kernel_tuner_timestamp(*seconds), "2023-12-22 09:54:05.502007+00:00");
  EXPECT_EQ(kernel_tuner_timestamp(1703238845.0), "2023-12-22 09:54:05+00:00");
  EXPECT_NEAR(*parse_kernel_tuner_timestamp("2023-12-22T10:54:05+01:00"), 1703238845.0, 1e-9);
  EXPECT_FALSE(parse_kernel_tuner_timestamp("yesterday"));
  EXPECT_FALSE(parse_kernel_tuner_timestamp("2023-13-22 09:54:05"));
}

TEST_F(KernelTunerCacheTest, FailuresMapToErrorKindsAndBack) {
  EXPECT_EQ(error_kind_of_failure("CompilationFailedConfig"), "build_error");
  EXPECT_EQ(error_kind_of_failure("RuntimeFailedConfig"), "runtime_error");
  EXPECT_EQ(error_kind_of_failure("compile"), "build_error");
  EXPECT_EQ(error_kind_of_failure("correctness"), "wrong_answer");
  EXPECT_EQ(kernel_tuner_failure("build_error"), "CompilationFailedConfig");
  EXPECT_EQ(kernel_tuner_failure("timeout"), "RuntimeFailedConfig");
}

TEST_F(KernelTunerCacheTest, EntriesBecomeRecordsInSecondsAndBack) {
  Json entries = {
      {"8,plain", {{"BLOCK", 8}, {"MODE", "plain"}, {"time", 2.5}, {"times", {2.0, 3.0, 2.5}}, {"compile_time", 120.0},
                   {"timestamp", "2023-12-22 09:54:05.502007+00:00"}}},
      {"16,plain", {{"BLOCK", 16}, {"MODE", "plain"}, {"time", 1.25}}},
      {"16,fast", {{"BLOCK", 16}, {"MODE", "fast"}, {"time", "CompilationFailedConfig"}}},
      {"32,fast", {{"BLOCK", 32}, {"MODE", "fast"}, {"time", "InvalidConfig"}}},
  };
  const auto path = write("cache.json", cache(entries).dump());
  const auto file = read_measured_file(path);
  EXPECT_EQ(file.invalid, 1u);
  const auto kernel_task = task();
  const auto records = records_of_cache(file, *kernel_task, "kernel_tuner:cache.json");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].config, (nlohmann::json{{"BLOCK", 8}, {"MODE", "plain"}}));
  EXPECT_EQ(records[0].costs, (std::vector<double>{2.0e-3, 3.0e-3, 2.5e-3}));
  EXPECT_DOUBLE_EQ(records[0].median_seconds, 2.5e-3);
  EXPECT_DOUBLE_EQ(records[0].gflops, 2000 / 2.5e-3 / 1e9);
  EXPECT_DOUBLE_EQ(records[0].build_seconds, 0.12);
  EXPECT_NEAR(records[0].timestamp, 1703238845.502007, 1e-6);
  EXPECT_EQ(records[0].tuner, "kernel_tuner");
  EXPECT_EQ(records[1].costs, (std::vector<double>{1.25e-3}));  // no `times`: the time alone
  EXPECT_EQ(records[1].timestamp, 0);
  EXPECT_EQ(records[2].error_kind, "build_error");
  EXPECT_EQ(records[2].device_fingerprint.value("name", ""), "Imported CPU");

  const std::string text = kernel_tuner_cache_text(*kernel_task, records);
  EXPECT_EQ(text.substr(text.size() - 3), "}\n}") << "Kernel Tuner reopens a cache by its last three characters";
  const auto again = Json::parse(text);
  EXPECT_EQ(again["tune_params_keys"], Json({"BLOCK", "MODE"}));
  EXPECT_EQ(again["tune_params"]["BLOCK"], Json({8, 16, 32}));
  EXPECT_EQ(again["problem_size"], Json({1000}));
  ASSERT_EQ(again["cache"].size(), 3u);
  const auto& first = again["cache"]["8,plain"];
  EXPECT_DOUBLE_EQ(first["time"].get<double>(), 2.5);
  ASSERT_EQ(first["times"].size(), 3u);
  EXPECT_DOUBLE_EQ(first["times"][1].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(first["compile_time"].get<double>(), 120.0);
  EXPECT_EQ(first["timestamp"], "2023-12-22 09:54:05.502007+00:00");
  EXPECT_TRUE(first.contains("GFLOP/s"));
  EXPECT_EQ(again["cache"]["16,fast"]["time"], "CompilationFailedConfig");
  EXPECT_TRUE(again["cache"]["16,fast"].contains("benchmark_time")) << "simulation mode reads it of every entry";

  // optune's own reader reads the written file.
  const auto reread = read_measured_file(write("again.json", text));
  EXPECT_EQ(reread.configs.size(), 3u);
  EXPECT_EQ(reread.device, "Imported CPU");
}

TEST_F(KernelTunerCacheTest, ParameterThatIsNoKnobIsNamed) {
  Json file = cache({{"8,plain,1", {{"BLOCK", 8}, {"MODE", "plain"}, {"EXTRA", 1}, {"time", 1.0}}}});
  file["tune_params_keys"].push_back("EXTRA");
  file["tune_params"]["EXTRA"] = {1};
  const auto landscape = read_measured_file(write("cache.json", file.dump()));
  try {
    records_of_cache(landscape, *task(), "run");
    FAIL() << "a parameter that is no knob was taken";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("parameter 'EXTRA'"), std::string::npos) << error.what();
  }
}

TEST_F(KernelTunerCacheTest, KnobTheCacheLacksIsNamed) {
  Json file = cache({{"8", {{"BLOCK", 8}, {"time", 1.0}}}});
  file["tune_params_keys"] = {"BLOCK"};
  file["tune_params"].erase("MODE");
  const auto landscape = read_measured_file(write("cache.json", file.dump()));
  try {
    records_of_cache(landscape, *task(), "run");
    FAIL() << "a cache without a knob was taken";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("knob 'MODE'"), std::string::npos) << error.what();
  }
}

TEST_F(KernelTunerCacheTest, EntryOutsideTheFilesSpaceIsNamed) {
  Json file = cache({{"32,plain", {{"BLOCK", 32}, {"MODE", "plain"}, {"time", 1.0}}},
                     {"64,plain", {{"BLOCK", 64}, {"MODE", "plain"}, {"time", 1.0}}}});
  file["tune_params"]["BLOCK"].push_back(64);
  for (const std::string key : {"32,plain", "64,plain"}) {
    Json one = file;
    one["cache"] = {{key, file["cache"][key]}};
    try {
      records_of_cache(read_measured_file(write("one.json", one.dump())), *task(), "run");
      ADD_FAILURE() << key << " was taken";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("cache entry '" + key + "'"), std::string::npos) << error.what();
    }
  }
}

TEST_F(KernelTunerCacheTest, T4ResultsBecomeRecordsWithTheirInvalidities) {
  auto result = [](int block, const std::string& mode, const std::string& invalidity, double time) {
    Json measurements = Json::array();
    if (invalidity == "correct") measurements.push_back({{"name", "time"}, {"value", time}, {"unit", "ms"}});
    return Json{{"configuration", {{"BLOCK", block}, {"MODE", mode}}},
                {"invalidity", invalidity},
                {"objectives", {"time"}},
                {"measurements", measurements}};
  };
  const Json file = {{"schema_version", "1.0.0"},
                     {"results",
                      {result(8, "plain", "correct", 2.0), result(16, "plain", "compile", 0),
                       result(16, "fast", "correctness", 0), result(32, "fast", "constraints", 0)}}};
  const auto landscape = read_measured_file(write("t4.json", file.dump()));
  const auto records = records_of_cache(landscape, *task(), "run");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].costs, (std::vector<double>{2.0e-3}));
  EXPECT_EQ(records[1].error_kind, "build_error");
  EXPECT_EQ(records[2].error_kind, "wrong_answer");
}

// The reader refuses it, for import and replay alike.
TEST_F(KernelTunerCacheTest, CacheTunedForAnotherObjectiveIsRefused) {
  Json file = cache({{"8,plain", {{"BLOCK", 8}, {"MODE", "plain"}, {"time", 1.0}, {"GFLOP/s", 5.0}}}});
  file["objective"] = "GFLOP/s";
  try {
    read_measured_file(write("cache.json", file.dump()));
    FAIL() << "GFLOP/s were taken for times";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("objective 'GFLOP/s'"), std::string::npos) << error.what();
  }
}

// Kernel Tuner 1.5 writes `objective` as a list and a failed configuration's failure string in
// `__error__`, with no time; its simulation mode reads such a cache, and so does the import.
TEST_F(KernelTunerCacheTest, KernelTuner15CacheWithFailuresIsImported) {
  Json file = cache({{"8,plain", {{"BLOCK", 8}, {"MODE", "plain"}, {"time", 2.0}, {"times", {2.0, 2.0}}}},
                     {"16,plain", {{"BLOCK", 16}, {"MODE", "plain"}, {"__error__", "CompilationFailedConfig"},
                                   {"compile_time", 0.5}}},
                     {"16,fast", {{"BLOCK", 16}, {"MODE", "fast"}, {"__error__", "RuntimeFailedConfig"}}},
                     {"32,fast", {{"BLOCK", 32}, {"MODE", "fast"}, {"__error__", "InvalidConfig"}}}});
  file["objective"] = {"time"};
  file["problem_size"] = 1000;
  const auto landscape = read_measured_file(write("cache.json", file.dump()));
  EXPECT_EQ(landscape.invalid, 1u);
  const auto records = records_of_cache(landscape, *task(), "run");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_TRUE(records[0].ok());
  EXPECT_EQ(records[1].error_kind, "build_error");
  EXPECT_EQ(records[1].error_message, "Kernel Tuner: CompilationFailedConfig");
  EXPECT_EQ(records[2].error_kind, "runtime_error");
}

}  // namespace
}  // namespace optune::tuner
