// Shared by the db tests: a temporary directory per test, the engines a test runs on (a SQLite
// file, a database on the tests' PostgreSQL server) and records that differ where a test needs
// them to.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>

#include "optune/db/database.hpp"
#include "postgres_test_server.hpp"

namespace optune::db::testing {

// A fresh directory under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("optune-db-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Where one test's databases are, by name: files in a temporary folder (SQLite) or databases of
// their own on the tests' PostgreSQL server. at(name) names the same database each time.
class Stores {
 public:
  explicit Stores(std::string engine) : engine_(std::move(engine)) {}
  std::string at(const std::string& name) {
    if (engine_ == "sqlite") return dir_.file(name);
    auto& database = server_databases_[name];
    if (!database) database = std::make_unique<optune::testing::ScratchDatabase>();
    return database->uri();
  }

 private:
  std::string engine_;
  TempDir dir_;
  std::map<std::string, std::unique_ptr<optune::testing::ScratchDatabase>> server_databases_;
};

// A test of the database's contract, run on each engine (INSTANTIATE_ENGINES).
class OnEachEngine : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") OPTUNE_REQUIRE_POSTGRES();
  }
  std::string at(const std::string& name) { return stores_.at(name); }

 private:
  Stores stores_{GetParam()};
};

#define INSTANTIATE_ENGINES(suite)                                                                   \
  INSTANTIATE_TEST_SUITE_P(Engines, suite, ::testing::Values("sqlite", "postgresql"),              \
                           [](const ::testing::TestParamInfo<std::string>& info) { return info.param; })

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline const TaskKey kGemmTask{"gemm.f32.M512.N512.K512", "cpu_gemm", "cpu", "dev0001"};

inline nlohmann::json fingerprint(const std::string& name) {
  return {{"kind", "cpu"}, {"name", name}, {"arch", "x86_64"}, {"cores", 16}, {"isa", {"avx2", "fma"}}};
}

// A successful record of kGemmTask with the given tile size and median.
inline TuningRecord ok_record(int tile, double median, double timestamp = 1000) {
  TuningRecord record;
  record.workload_key = kGemmTask.workload_key;
  record.template_name = kGemmTask.template_name;
  record.target = kGemmTask.target;
  record.device_id = kGemmTask.device_id;
  record.device_fingerprint = fingerprint("Intel(R) Xeon(R) Platinum 8480");
  record.config = {{"tile_m", tile}, {"tile_n", 8}, {"unroll", true}, {"order", "mnk"}};
  record.costs = {median * 1.01, median, median * 0.99};
  record.median_seconds = median;
  record.gflops = 2.0 * 512 * 512 * 512 / median / 1e9;
  record.build_seconds = 0.25;
  record.timestamp = timestamp;
  record.tuner = "xgb";
  record.run_id = "run-1";
  record.optune_version = "0.1.0";
  return record;
}

inline TuningRecord failed_record(int tile, const std::string& kind, double timestamp = 1000) {
  TuningRecord record = ok_record(tile, 0, timestamp);
  record.costs.clear();
  record.median_seconds = 0;
  record.gflops = 0;
  record.error_kind = kind;
  record.error_message = "candidate failed: " + kind;
  return record;
}

// Every field but id: what the database promises to keep.
inline nlohmann::json content(const TuningRecord& record) { return to_json(record); }

}  // namespace optune::db::testing
