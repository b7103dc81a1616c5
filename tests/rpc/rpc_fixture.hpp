// The RPC tests' fixture: real `optune rpc` processes (tracker, servers, proxy) started in a
// temporary directory, each announcing its port in its log, and the `optune` command run against
// them; shared by rpc_test.cpp and rpc_opencl_test.cpp.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/measure/subprocess.hpp"

namespace optune::rpc_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct CommandRun {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One `optune rpc ...` process: its output goes to a log file, read for the announced port.
struct Daemon {
  measure::Subprocess process;
  fs::path log;
  unsigned short port = 0;
  std::string announce;
};

class RpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("optune-rpc-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // This test's own machine-wide run locks: tests run side by side do not refuse each other.
    ::setenv("OPTUNE_LOCK_DIR", (dir_ / "locks").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("OPTUNE_LOCK_DIR");
    daemons_.clear();  // kills them
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Starts `optune <arguments>` (optionally under a prefix such as `ip netns exec NS`) and waits
  // for its "listening on HOST:PORT" (or "serving through proxy") line.
  Daemon& start(const std::string& name, const std::vector<std::string>& arguments,
                const std::vector<std::string>& prefix = {}) {
    std::vector<std::string> argv = prefix;
    argv.push_back(OPTUNE_EXECUTABLE);
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    fs::path log = dir_ / (name + ".log");
    auto process = measure::Subprocess::spawn(argv, {.pipe_stdio = false, .output_file = log.string()});
    auto& daemon = *daemons_.emplace_back(std::make_unique<Daemon>(Daemon{std::move(process), log, 0, ""}));
    static const std::regex listening("listening on [^ ]+:([0-9]+)");
    for (auto deadline = Clock::now() + std::chrono::seconds(60); Clock::now() < deadline;) {
      std::string text = slurp(log);
      std::smatch match;
      if (std::regex_search(text, match, listening)) {
        daemon.port = static_cast<unsigned short>(std::stoi(match[1]));
        daemon.announce = text;
        return daemon;
      }
      if (contains(text, "serving through proxy")) {
        daemon.announce = text;
        return daemon;
      }
      if (daemon.process.poll()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << name << " did not start:\n" << slurp(log);
    throw std::runtime_error(name + " did not start");
  }

  CommandRun optune(const std::string& arguments, const std::string& prefix = "") {
    static int count = 0;
    fs::path out = dir_ / ("out" + std::to_string(count)), err = dir_ / ("err" + std::to_string(count++));
    std::string command = prefix + " " + OPTUNE_EXECUTABLE + " " + arguments + " > " + out.string() + " 2> " + err.string();
    int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }

  std::string write_file(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  Daemon& start_tracker(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> arguments = {"rpc", "tracker", "--port", "0", "--heartbeat-timeout", "3"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return start("tracker", arguments);
  }
  // `core` >= 0: the server (and its worker) pinned to that core, so two "devices" on this one
  // machine do not fight over the same cores while both measure.
  Daemon& start_server(const std::string& name, const std::string& key, unsigned short tracker_port,
                       const std::vector<std::string>& extra = {}, int core = -1) {
    fs::create_directories(dir_ / (name + "-work"));
    std::vector<std::string> arguments = {"rpc", "server", "--port", "0", "--key", key, "--heartbeat", "0.5",
                                          "--workdir", (dir_ / (name + "-work")).string()};
    if (tracker_port) arguments.insert(arguments.end(), {"--tracker", "127.0.0.1:" + std::to_string(tracker_port)});
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    if (core >= 0) return start(name, arguments, {"taskset", "-c", std::to_string(core)});
    return start(name, arguments);
  }

  std::vector<db::TuningRecord> records() {
    return db::Database::open(db(), db::Database::Mode::kReadOnly).records({});
  }
  std::string integrity() {
    std::string command = "sqlite3 " + db() + " 'PRAGMA integrity_check' > " + (dir_ / "integrity").string();
    return std::system(command.c_str()) == 0 ? slurp(dir_ / "integrity") : "sqlite3 failed";
  }
  std::string db() const { return (dir_ / "optune.db").string(); }
  static std::string device_id(const Daemon& server) {
    std::smatch match;
    static const std::regex id(", ([0-9a-f]{8,})\\), ");
    return std::regex_search(server.announce, match, id) ? match[1].str() : "?";
  }

  fs::path dir_;
  std::vector<std::unique_ptr<Daemon>> daemons_;
};

inline constexpr const char* kTinyTune =
    "tune --op gemm --shape 48,40,36 --tuner random --repeat 2 --min-repeat-ms 1 --quiet --seed 5 --rpc-wait 20";

// Whether a record holds the costs of its rounds, `repeat` a round: three rounds for the closing
// waves ("remeasure"), 5 to 11 for the final comparison ("final"), one for a trial or the default.
// A trial's round may end early where adaptive timing found it clearly slower (over 1.15x) than
// the best so far, which was no faster than the run's `fastest` median (commands.md, "Timed as
// long as its rank needs"): on a CPU where the random configs run 3x slower than the default.
inline bool has_the_costs_of_its_rounds(const db::TuningRecord& record, std::size_t repeat, double fastest) {
  if (record.tuner == "remeasure") return record.costs.size() == 3 * repeat;
  if (record.tuner == "final")
    return record.costs.size() % repeat == 0 && record.costs.size() >= 5 * repeat && record.costs.size() <= 11 * repeat;
  if (record.costs.size() == repeat) return true;
  return record.tuner != "default" && !record.costs.empty() && record.costs.size() < repeat &&
         record.median_seconds > 1.15 * fastest;
}

// The records of a `--trials 2 --remeasure 1` run: the default, the trials, the closing waves of
// the best and the default (and of the third config when its one record beat them), and the final
// comparison of the default and the best two.
inline void expect_the_records_of_a_tiny_run(const std::vector<db::TuningRecord>& records) {
  std::size_t finals = 0;
  for (const auto& record : records) finals += record.tuner == "final";
  EXPECT_GE(finals, 2u);
  EXPECT_LE(finals, 3u);
  EXPECT_GE(records.size() - finals, 1u + 2u + 2u);
  EXPECT_LE(records.size() - finals, 1u + 2u + 4u);
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& record : records)
    if (record.ok()) fastest = std::min(fastest, record.median_seconds);
  for (const auto& record : records)
    EXPECT_TRUE(has_the_costs_of_its_rounds(record, 2, fastest)) << record.tuner << " " << record.costs.size();
}

inline std::string rpc(const std::string& key, const Daemon& tracker) {
  return " --rpc " + key + "@127.0.0.1:" + std::to_string(tracker.port);
}

}  // namespace optune::rpc_test
