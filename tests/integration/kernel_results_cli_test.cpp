// A kernel file's records in and out of optune through the command (issue 20): Kernel Tuner cache
// files imported as records (`import --kernel-tuner`) and exported again (`export --kernel-tuner`),
// on caches written here and on a real Kernel Tuner cache from ../shared/landscapes when there
// is one; and the header of the best configs (`apply-best --kernel`), compiled by a small C++
// program that checks its rows. Real processes, real SQLite files, the system's C++ compiler.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "command_test.hpp"
#include "optune/db/database.hpp"

namespace optune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test_support::CommandRun;
using test_support::CommandTest;

// Five configurations as Kernel Tuner writes them: two timed (one with its single runs), two
// failed, one outside the kernel's restrictions.
Json synthetic_cache(const std::string& device = "Imported CPU") {
  Json cache = Json::object();
  cache["8,plain"] = {{"BLOCK", 8},          {"MODE", "plain"}, {"time", 2.5},
                      {"times", {2.0, 3.0, 2.5}}, {"compile_time", 120.5},
                      {"verification_time", 0}, {"benchmark_time", 7.5},
                      {"timestamp", "2023-12-22 09:54:05.502007+00:00"}};
  cache["8,fast"] = {{"BLOCK", 8}, {"MODE", "fast"}, {"time", 1.25}, {"compile_time", 99.0}};
  cache["16,plain"] = {{"BLOCK", 16}, {"MODE", "plain"}, {"time", "RuntimeFailedConfig"}, {"compile_time", 80.0}};
  cache["16,fast"] = {{"BLOCK", 16}, {"MODE", "fast"}, {"time", "CompilationFailedConfig"}};
  cache["32,plain"] = {{"BLOCK", 32}, {"MODE", "plain"}, {"time", "InvalidConfig"}};
  return {{"device_name", device},
          {"kernel_name", "blocks"},
          {"problem_size", {1000}},
          {"tune_params_keys", {"BLOCK", "MODE"}},
          {"tune_params", {{"BLOCK", {8, 16, 32}}, {"MODE", {"plain", "fast"}}}},
          {"objective", "time"},
          {"cache", cache}};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

class KernelResultsCliTest : public CommandTest {
 protected:
  void SetUp() override {
    CommandTest::SetUp();
    for (const char* file : {"blocks.toml", "blocks.cpp"})
      fs::copy_file(fs::path(OPTUNE_SOURCE_DIR) / "tests/data/kernels" / file, dir_ / file);
  }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }

  fs::path write_gzip(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    gzFile file = gzopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    EXPECT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(file);
    return path;
  }

  std::string kernel() const { return (dir_ / "blocks.toml").string(); }

  CommandRun import_cache(const fs::path& cache, const std::string& extra = "") {
    return optune("import --kernel-tuner " + cache.string() + " --kernel " + kernel() + " --db " + db() + " " + extra);
  }

  std::vector<db::TuningRecord> records() {
    return db::Database::open(db(), db::Database::Mode::kReadOnly).records({});
  }

  // Every configuration of `original` but the invalid ones is in `exported` with the same times
  // (`time` there is the median of `times`) or the same failure.
  static void expect_same_configurations(const Json& original, const Json& exported) {
    std::set<std::string> expected, written;
    for (const auto& [key, entry] : original["cache"].items())
      if (entry["time"] != "InvalidConfig") expected.insert(key);
    for (const auto& [key, entry] : exported["cache"].items()) written.insert(key);
    EXPECT_EQ(written, expected);
    for (const auto& key : expected) {
      if (!written.count(key)) continue;
      const auto& before = original["cache"][key];
      const auto& after = exported["cache"][key];
      for (const auto& name : original["tune_params_keys"])
        EXPECT_EQ(after[name.get<std::string>()], before[name.get<std::string>()]) << key;
      if (before["time"].is_string()) {
        EXPECT_EQ(after["time"], before["time"]) << key;
        continue;
      }
      std::vector<double> times;
      for (const auto& time : before.contains("times") ? before["times"] : Json::array({before["time"]}))
        times.push_back(time.get<double>());
      ASSERT_EQ(after["times"].size(), times.size()) << key;
      for (std::size_t i = 0; i < times.size(); ++i)
        EXPECT_TRUE(near(after["times"][i].get<double>(), times[i]))
            << key << ": " << after["times"][i] << " vs " << times[i];
      EXPECT_TRUE(near(after["time"].get<double>(), median(times))) << key;
      if (before.contains("compile_time"))
        EXPECT_TRUE(near(after["compile_time"].get<double>(), before["compile_time"].get<double>())) << key;
      if (before.contains("timestamp")) EXPECT_EQ(after["timestamp"], before["timestamp"]) << key;
    }
  }
};

TEST_F(KernelResultsCliTest, ImportStoresTheCacheAsRecordsOfTheKernelWorkload) {
  const fs::path cache = write_gzip("history.json.gz", synthetic_cache().dump());
  CommandRun run = import_cache(cache);
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("imported 4 new records"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 invalid left out"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("fingerprint from the name alone"), std::string::npos) << run.out;

  const auto stored = records();
  ASSERT_EQ(stored.size(), 4u);
  std::map<std::string, db::TuningRecord> by_config;
  for (const auto& record : stored) {
    EXPECT_EQ(record.workload_key, "kernel.blocks.N1000");
    EXPECT_TRUE(record.template_name.starts_with("kernel.blocks.cpu#")) << record.template_name;
    EXPECT_EQ(record.target, "cpu");
    EXPECT_EQ(record.device_fingerprint.value("name", ""), "Imported CPU");
    EXPECT_EQ(record.device_fingerprint.value("kind", ""), "cpu");
    EXPECT_EQ(record.tuner, "kernel_tuner");
    by_config[record.config["BLOCK"].dump() + "," + record.config["MODE"].get<std::string>()] = record;
  }
  EXPECT_EQ(by_config["8,plain"].costs, (std::vector<double>{2.0e-3, 3.0e-3, 2.5e-3}));
  EXPECT_DOUBLE_EQ(by_config["8,plain"].median_seconds, 2.5e-3);
  EXPECT_DOUBLE_EQ(by_config["8,plain"].build_seconds, 0.1205);
  EXPECT_EQ(by_config["8,fast"].costs, (std::vector<double>{1.25e-3}));
  EXPECT_DOUBLE_EQ(by_config["8,fast"].gflops, 2000 / 1.25e-3 / 1e9);
  EXPECT_EQ(by_config["16,plain"].error_kind, "runtime_error");
  EXPECT_EQ(by_config["16,fast"].error_kind, "build_error");

  // The same cache again adds nothing; --shape stores it under another problem size.
  run = import_cache(cache);
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("imported 0 new records"), std::string::npos) << run.out;
  run = import_cache(cache, "--shape N=4000");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("kernel.blocks.N4000"), std::string::npos) << run.out;
}

TEST_F(KernelResultsCliTest, ImportRefusesACacheOfAnotherProblemSizeUnlessShapeNamesIt) {
  Json cache = synthetic_cache();
  cache["problem_size"] = {4096};
  const fs::path file = write("other_size.json", cache.dump());
  expect_bad_input("import --kernel-tuner " + file.string() + " --kernel " + kernel() + " --db " + db(),
                   "problem_size [4096] is not the kernel's size N=1000");
  EXPECT_FALSE(fs::exists(db()));
  CommandRun run = import_cache(file, "--shape N=4096");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("kernel.blocks.N4096"), std::string::npos) << run.out;
  // A problem_size of other length than the extents is a grid, not a size: nothing to compare.
  cache["problem_size"] = {250, 4};
  run = import_cache(write("grid.json", cache.dump()));
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("kernel.blocks.N1000"), std::string::npos) << run.out;
}

TEST_F(KernelResultsCliTest, ExportGivesBackTheImportedConfigurationsAndTimes) {
  const Json original = synthetic_cache();
  CommandRun run = import_cache(write("history.json", original.dump(2)));
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const fs::path back = dir_ / "back.json";
  run = optune("export --kernel-tuner --kernel " + kernel() + " --db " + db() + " --out " + back.string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("exported 4 configurations of kernel.blocks.N1000 on Imported CPU (2 failed)"),
            std::string::npos) << run.err;
  const std::string text = test_support::slurp(back);
  ASSERT_GE(text.size(), 3u);
  EXPECT_EQ(text.substr(text.size() - 3), "}\n}") << "Kernel Tuner reopens a closed cache by its last characters";
  const Json exported = Json::parse(text);
  EXPECT_EQ(exported["device_name"], "Imported CPU");
  EXPECT_EQ(exported["kernel_name"], "blocks");
  EXPECT_EQ(exported["tune_params_keys"], original["tune_params_keys"]);
  EXPECT_EQ(exported["tune_params"], original["tune_params"]);
  expect_same_configurations(original, exported);

  // optune's own reader takes the exported file as it takes Kernel Tuner's.
  run = optune("replay --landscape " + back.string() + " --tuner random --seeds 2 --budgets 2");
  EXPECT_EQ(run.code, 0) << run.out << run.err;
}

// A CUDA kernel file's cache as Kernel Tuner writes it (block_size_x among its tune_params): imported
// for a GPU known by name alone, exported back, and tabled by apply-best with each row's entry,
// grid and block; no GPU needed.
TEST_F(KernelResultsCliTest, CudaKernelCacheImportsExportsAndTables) {
  const std::string kernel = std::string(OPTUNE_SOURCE_DIR) + "/configs/kernels/reduction_cuda.toml";
  Json cache = Json::object();
  cache["128,1,4"] = {{"block_size_x", 128}, {"rows_per_block", 1}, {"VEC", 4}, {"time", 0.051}, {"times", {0.05, 0.051, 0.052}}};
  cache["256,2,2"] = {{"block_size_x", 256}, {"rows_per_block", 2}, {"VEC", 2}, {"time", 0.049}};
  cache["64,4,1"] = {{"block_size_x", 64}, {"rows_per_block", 4}, {"VEC", 1}, {"time", "RuntimeFailedConfig"}};
  const Json original = {{"device_name", "NVIDIA H100 80GB HBM3"},
                         {"kernel_name", "row_sums"},
                         {"problem_size", {4096, 8192}},
                         {"tune_params_keys", {"block_size_x", "rows_per_block", "VEC"}},
                         {"tune_params", {{"block_size_x", {32, 64, 128, 256, 512, 1024}},
                                          {"rows_per_block", {1, 2, 4, 8}}, {"VEC", {1, 2, 4}}}},
                         {"objective", "time"},
                         {"cache", cache}};
  CommandRun run = optune("import --kernel-tuner " + write("cuda.json", original.dump()).string() + " --kernel " +
                          kernel + " --db " + db());
  if (run.err.find("is not a backend of kernel files") != std::string::npos) GTEST_SKIP() << "built without CUDA";
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(records().size(), 3u);
  const fs::path back = dir_ / "back.json";
  run = optune("export --kernel-tuner --kernel " + kernel + " --db " + db() + " --out " + back.string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  expect_same_configurations(original, Json::parse(test_support::slurp(back)));
  const fs::path header = dir_ / "tuned.hpp";
  run = optune("apply-best --kernel " + kernel + " --db " + db() + " --out " + header.string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  // The fastest: 256 threads a row, 2 rows a block (4096 / 2 blocks), float2 loads.
  EXPECT_NE(test_support::slurp(header).find("\"row_sums<2>\", 2, {2048, 1, 1}, {256, 2, 1}, 0}"), std::string::npos)
      << test_support::slurp(header);
}

TEST_F(KernelResultsCliTest, ImportFindsTheDeviceByItsName) {
  CommandRun run = import_cache(write("first.json", synthetic_cache("Lab CPU").dump()));
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("fingerprint from the name alone"), std::string::npos) << run.out;
  Json second = synthetic_cache("Lab CPU");
  second["cache"]["8,plain"]["time"] = 9.0;
  second["cache"]["8,plain"].erase("times");
  run = import_cache(write("second.json", second.dump()));
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("fingerprint from the database"), std::string::npos) << run.out;
  std::set<std::string> devices;
  for (const auto& record : records()) devices.insert(record.device_id);
  EXPECT_EQ(devices.size(), 1u);

  // This machine's CPU by its name: its full fingerprint.
  run = optune("devices --format json");
  ASSERT_EQ(run.code, 0) << run.err;
  std::string local_name;
  for (const auto& device : nlohmann::json::parse(run.out))
    if (device.value("target", "") == "cpu") local_name = device["fingerprint"].value("name", "");
  ASSERT_FALSE(local_name.empty()) << run.out;
  run = optune("import --kernel-tuner " + write("local.json", synthetic_cache(local_name).dump()).string() +
               " --kernel " + kernel() + " --db " + (dir_ / "local.db").string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("fingerprint from this machine"), std::string::npos) << run.out;

  // --device-name names it when the cache does not.
  Json nameless = synthetic_cache();
  nameless.erase("device_name");
  const fs::path cache = write("nameless.json", nameless.dump());
  expect_bad_input("import --kernel-tuner " + cache.string() + " --kernel " + kernel() + " --db " + db(), "--device-name");
  run = import_cache(cache, "--device-name 'Other CPU'");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("on Other CPU"), std::string::npos) << run.out;
}

TEST_F(KernelResultsCliTest, ImportRefusesBadInputWithOneLineAndWritesNothing) {
  const std::string tail = " --kernel " + kernel() + " --db " + db();
  Json extra = synthetic_cache();
  extra["tune_params_keys"].push_back("UNROLL");
  extra["tune_params"]["UNROLL"] = {1, 2};
  for (auto& [key, entry] : extra["cache"].items()) entry["UNROLL"] = 1;
  expect_bad_input("import --kernel-tuner " + write("extra.json", extra.dump()).string() + tail,
                   "parameter 'UNROLL' of extra is not a knob of");
  Json missing = synthetic_cache();
  missing["tune_params_keys"] = {"BLOCK"};
  missing["tune_params"].erase("MODE");
  for (const char* key : {"8,fast", "16,fast"}) missing["cache"].erase(key);  // one entry per configuration
  for (auto& [key, entry] : missing["cache"].items()) entry.erase("MODE");
  expect_bad_input("import --kernel-tuner " + write("missing.json", missing.dump()).string() + tail,
                   "knob 'MODE' of");
  Json value = synthetic_cache();
  value["tune_params"]["BLOCK"].push_back(64);
  value["cache"]["64,plain"] = {{"BLOCK", 64}, {"MODE", "plain"}, {"time", 1.0}};
  expect_bad_input("import --kernel-tuner " + write("value.json", value.dump()).string() + tail,
                   "cache entry '64,plain'");
  Json restricted = synthetic_cache();
  restricted["cache"]["32,plain"]["time"] = 1.0;  // the file's rules exclude BLOCK 32
  expect_bad_input("import --kernel-tuner " + write("restricted.json", restricted.dump()).string() + tail,
                   "BLOCK != 32");
  Json untimed = synthetic_cache();
  untimed["cache"]["8,plain"]["times"] = {1.0, -2.0};
  expect_bad_input("import --kernel-tuner " + write("untimed.json", untimed.dump()).string() + tail, "'times' holds -2");
  expect_bad_input("import --kernel-tuner " + write("text.json", "not json").string() + tail, "not JSON");
  Json no_params = synthetic_cache();
  no_params.erase("tune_params");
  expect_bad_input("import --kernel-tuner " + write("params.json", no_params.dump()).string() + tail, "tune_params");
  const fs::path good = write("good.json", synthetic_cache().dump());
  expect_bad_input("import --kernel-tuner " + good.string() + " --kernel " + (dir_ / "none.toml").string() + " --db " + db(),
                   "none.toml");
  // opencl: not the kernel's backend (or, in a cpu-only build, no backend at all)
  expect_bad_input("import --kernel-tuner " + good.string() + tail + " --target opencl", "opencl");
  expect_bad_input("import --kernel-tuner " + good.string() + tail + " --shape N=0", "N");
  expect_bad_input("import --kernel-tuner " + good.string() + " --db " + db(), "--kernel");
  expect_bad_input("import " + good.string() + tail, "--kernel-tuner");
  EXPECT_FALSE(fs::exists(db())) << "a refused import wrote a database";
}

TEST_F(KernelResultsCliTest, ExportRefusesWhatItCannotWrite) {
  const std::string out = " --out " + (dir_ / "out.json").string();
  expect_bad_input("export --kernel-tuner --db " + db() + out, "--kernel");
  ASSERT_EQ(import_cache(write("a.json", synthetic_cache("CPU A").dump())).code, 0);
  expect_bad_input("export --kernel-tuner --kernel " + kernel() + " --shape N=5 --db " + db() + out,
                   "no records of kernel.blocks.N5");
  ASSERT_EQ(import_cache(write("b.json", synthetic_cache("CPU B").dump())).code, 0);
  expect_bad_input("export --kernel-tuner --kernel " + kernel() + " --db " + db() + out, "--device");
  CommandRun run = optune("export --kernel-tuner --kernel " + kernel() + " --device 'CPU B' --db " + db() + out);
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(Json::parse(test_support::slurp(dir_ / "out.json"))["device_name"], "CPU B");
  run = optune("export --kernel-tuner --ok-only --kernel " + kernel() + " --device 'CPU B' --db " + db() + out);
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(Json::parse(test_support::slurp(dir_ / "out.json"))["cache"].size(), 2u);
  expect_bad_input("export --kernel-tuner --op gemm --kernel " + kernel() + " --db " + db() + out, "--op");
}

// A real Kernel Tuner cache (the convolution space measured on an A100), imported for a kernel file
// written here with its parameters as knobs, and exported again.
TEST_F(KernelResultsCliTest, RealKernelTunerCacheRoundTrips) {
  const fs::path landscape = fs::path(OPTUNE_SOURCE_DIR) / "../shared/landscapes/convolution_A100.json.gz";
  if (!fs::exists(landscape)) GTEST_SKIP() << landscape << " is not here";
  if (!OPTUNE_TEST_OPENCL) GTEST_SKIP() << "built without OpenCL";
  gzFile file = gzopen(landscape.c_str(), "rb");
  std::string text;
  char buffer[1 << 16];
  for (int got = 0; (got = gzread(file, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(got));
  gzclose(file);
  const Json original = Json::parse(text);
  std::string knobs;
  for (const auto& [name, values] : original["tune_params"].items()) knobs += name + " = " + values.dump() + "\n";
  write("convolution.cl", "__kernel void convolution_kernel(__global float* out) {}\n");
  write("convolution.toml", "name = \"convolution\"\nbackend = \"opencl\"\nsource = \"convolution.cl\"\n"
                            "entry = \"convolution_kernel\"\nflops = \"2 * 15 * 15 * W * H\"\n"
                            "args = [ { name = \"out\", kind = \"buffer\", dtype = \"f32\", count = \"W * H\", "
                            "output = true } ]\n"
                            "[extents]\nW = 4096\nH = 4096\n[knobs]\n" + knobs +
                            "[launch]\nglobal = [\"block_size_x * 256\", \"block_size_y * 256\"]\n"
                            "local = [\"block_size_x\", \"block_size_y\"]\n");
  const std::string kernel_file = (dir_ / "convolution.toml").string();
  CommandRun run = optune("import --kernel-tuner " + landscape.string() + " --kernel " + kernel_file +
                          " --target opencl --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("4362 configurations"), std::string::npos) << run.out;
  const fs::path back = dir_ / "back.json";
  run = optune("export --kernel-tuner --kernel " + kernel_file + " --db " + db() + " --out " + back.string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const Json exported = Json::parse(test_support::slurp(back));
  EXPECT_EQ(exported["device_name"], original["device_name"]);
  EXPECT_EQ(exported["kernel_name"], original["kernel_name"]);
  EXPECT_EQ(exported["tune_params_keys"], original["tune_params_keys"]);
  expect_same_configurations(original, exported);
}

// The header's rows, checked at compile time by a program that includes it.
class KernelApplyBestCliTest : public KernelResultsCliTest {
 protected:
  // Compiles `checks` (statements at namespace scope, e.g. static_asserts) after including the
  // header; returns the compiler's output, "" when it compiled.
  std::string compile_with(const fs::path& header, const std::string& checks) {
    const fs::path program = write("consumer.cpp", "#include \"" + header.filename().string() + "\"\n" + checks +
                                                       "\nint main() { return 0; }\n");
    const fs::path log = dir_ / "compile.log";
    const std::string command = "c++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I " + dir_.string() + " " +
                                program.string() + " > " + log.string() + " 2>&1";
    return std::system(command.c_str()) == 0 ? "" : "compile failed:\n" + test_support::slurp(log);
  }
};

TEST_F(KernelApplyBestCliTest, CpuKernelTableHoldsTheBestDefinesAndCompiles) {
  ASSERT_EQ(import_cache(write("n1000.json", synthetic_cache().dump())).code, 0);
  Json bigger = synthetic_cache();
  bigger["cache"]["8,fast"]["time"] = 7.0;  // at N=4000, 8,plain (2.5 ms) is the best
  ASSERT_EQ(import_cache(write("n4000.json", bigger.dump()), "--shape N=4000").code, 0);
  const fs::path header = dir_ / "tuned_blocks.hpp";
  CommandRun run = optune("apply-best --kernel " + kernel() + " --db " + db() + " --out " + header.string() +
                          " --workload kernel.blocks.N1000 --workload kernel.blocks.N2000");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("2 tuned rows"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("no tuned config for kernel.blocks.N2000 on Imported CPU"), std::string::npos) << run.err;
  const std::string text = test_support::slurp(header);
  EXPECT_NE(text.find("//   kernel.blocks.N2000 on Imported CPU"), std::string::npos) << text;
  EXPECT_NE(text.find("\"-DBLOCK=8 -DMODE=fast\""), std::string::npos) << text;
  EXPECT_EQ(compile_with(header, R"(
namespace tuned = optune::tuned::kernel_blocks;
static_assert(tuned::kTuned.size() == 2);
constexpr const tuned::TunedKernel* small = tuned::find_tuned("kernel.blocks.N1000", "Imported CPU");
static_assert(small->extents[0] == 1000);  // a null row is no constant expression
static_assert(small->config.BLOCK == 8 && small->config.MODE == "fast");
static_assert(small->defines == "-DBLOCK=8 -DMODE=fast");
static_assert(small->target == "cpu");
constexpr const tuned::TunedKernel* large = tuned::find_tuned("kernel.blocks.N4000", "Imported CPU");
static_assert(large->config.MODE == "plain");
static_assert(tuned::find_tuned("kernel.blocks.N2000", "Imported CPU") == nullptr);
static_assert(tuned::kEntry == "blocks" && tuned::kExtents[0] == "N");
)"),
            "");

  // Run again on the same records, the header is left as it is (builds that depend on it do not rerun).
  run = optune("apply-best --kernel " + kernel() + " --db " + db() + " --out " + header.string() +
               " --workload kernel.blocks.N1000 --workload kernel.blocks.N2000");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("(unchanged)"), std::string::npos) << run.out;

  // No row for the device asked for: an empty table that still compiles.
  run = optune("apply-best --kernel " + kernel() + " --db " + db() + " --device 'No Such CPU' --out " +
               (dir_ / "empty.hpp").string() + " --workload kernel.blocks.N1000");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.err.find("no tuned config for kernel.blocks.N1000"), std::string::npos) << run.err;
  EXPECT_EQ(compile_with(dir_ / "empty.hpp", "static_assert(optune::tuned::kernel_blocks::kTuned.empty());"), "");
}

TEST_F(KernelApplyBestCliTest, OpenCLKernelTableHoldsTheLaunchSizes) {
  if (!OPTUNE_TEST_OPENCL) GTEST_SKIP() << "built without OpenCL";
  write("tiles.cl", "__kernel void tiles(__global float* out) {}\n");
  write("tiles.toml", R"(name = "tiles"
backend = "opencl"
source = "tiles.cl"
entry = "tiles"
bytes = "8 * N * M"
build_options = ["-cl-mad-enable"]
args = [ { name = "out", kind = "buffer", dtype = "f32", count = "N * M", output = true } ]
[extents]
N = 512
M = 256
[knobs]
TILE = [8, 16, 32]
WPT = [1, 2]
[constraints]
rules = ["TILE % WPT == 0"]
[launch]
global = ["N / WPT", "M"]
local = ["TILE / WPT", "TILE"]
)");
  Json cache = {{"device_name", "Imported GPU"},
                {"kernel_name", "tiles"},
                {"tune_params_keys", {"TILE", "WPT"}},
                {"tune_params", {{"TILE", {8, 16, 32}}, {"WPT", {1, 2}}}},
                {"cache",
                 {{"8,1", {{"TILE", 8}, {"WPT", 1}, {"time", 0.9}}},
                  {"16,2", {{"TILE", 16}, {"WPT", 2}, {"time", 0.4}}},
                  {"32,2", {{"TILE", 32}, {"WPT", 2}, {"time", "RuntimeFailedConfig"}}}}}};
  const std::string tiles = (dir_ / "tiles.toml").string();
  CommandRun run = optune("import --kernel-tuner " + write("tiles.json", cache.dump()).string() + " --kernel " + tiles +
                          " --target opencl --db " + db());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const fs::path header = dir_ / "tuned_tiles.hpp";
  run = optune("apply-best --kernel " + tiles + " --target opencl --db " + db() + " --out " + header.string());
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(compile_with(header, R"(
namespace tuned = optune::tuned::kernel_tiles;
constexpr const tuned::TunedKernel* row = tuned::find_tuned("kernel.tiles.N512.M256", "Imported GPU");
static_assert(row->config.TILE == 16 && row->config.WPT == 2);  // a null row is no constant expression
static_assert(row->build_options == "-DTILE=16 -DWPT=2 -cl-mad-enable");
static_assert(row->dimensions == 2);
static_assert(row->global_size[0] == 256 && row->global_size[1] == 256 && row->global_size[2] == 1);
static_assert(row->local_size[0] == 8 && row->local_size[1] == 16 && row->local_size[2] == 1);
)"),
            "");
}

// CMake's optune_apply_best(... KERNEL ...) writes the table at build time into a consumer's include
// path, and notes the sizes without a row.
TEST_F(KernelApplyBestCliTest, CMakeBuildIncludesTheKernelTable) {
  ASSERT_EQ(import_cache(write("n1000.json", synthetic_cache().dump())).code, 0);
  const fs::path project = dir_ / "consumer";
  fs::create_directories(project);
  std::ofstream(project / "CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.16)\nproject(consumer CXX)\n"
      << "set(OPTUNE_EXECUTABLE " << OPTUNE_EXECUTABLE << ")\n"
      << "include(" << OPTUNE_SOURCE_DIR << "/cmake/OptuneApplyBest.cmake)\n"
      << "add_executable(consumer main.cpp)\ntarget_compile_features(consumer PRIVATE cxx_std_20)\n"
      << "optune_apply_best(consumer DB " << db() << " KERNEL " << kernel()
      << " WORKLOADS kernel.blocks.N1000 kernel.blocks.N2000)\n";
  std::ofstream(project / "main.cpp") << R"(#include <optune_kernel_blocks.hpp>
namespace tuned = optune::tuned::kernel_blocks;
static_assert(tuned::find_tuned("kernel.blocks.N1000", "Imported CPU")->defines == "-DBLOCK=8 -DMODE=fast");
int main() { return tuned::find_tuned("kernel.blocks.N2000", "Imported CPU") == nullptr ? 0 : 1; }
)";
  const fs::path log = dir_ / "cmake.log";
  const std::string build = "cmake -S " + project.string() + " -B " + (project / "build").string() + " > " +
                            log.string() + " 2>&1 && cmake --build " + (project / "build").string() + " >> " +
                            log.string() + " 2>&1 && " + (project / "build" / "consumer").string();
  EXPECT_EQ(std::system(build.c_str()), 0) << test_support::slurp(log);
  EXPECT_NE(test_support::slurp(log).find("no tuned config for kernel.blocks.N2000 on Imported CPU"), std::string::npos)
      << test_support::slurp(log);
}

TEST_F(KernelApplyBestCliTest, RefusesBadInputWithOneLine) {
  ASSERT_EQ(import_cache(write("n1000.json", synthetic_cache().dump())).code, 0);
  const std::string base = "apply-best --kernel " + kernel() + " --db " + db() + " --out " + (dir_ / "t.hpp").string();
  expect_bad_input(base + " --workload kernel.other.N1000", "is not a size of kernel blocks");
  expect_bad_input(base + " --workload kernel.blocks.M1000", "is not a size of kernel blocks");
  expect_bad_input(base + " --workload gemm", "gemm");
  expect_bad_input(base + " --target opencl", "opencl");  // not its backend (or no backend: cpu-only)
  expect_bad_input(base + " --suite " + (dir_ / "suite.toml").string(), "--suite");
  expect_bad_input("apply-best --kernel " + (dir_ / "none.toml").string() + " --db " + db() + " --out " +
                       (dir_ / "t.hpp").string(),
                   "none.toml");
  EXPECT_FALSE(fs::exists(dir_ / "t.hpp"));
}

}  // namespace
}  // namespace optune
