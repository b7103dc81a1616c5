// bench_store: the results store under a team's load, on either engine (a SQLite file or a
// PostgreSQL URI). tests/bench/store_bench.sh runs it on both; the figures are in
// docs/results-store.md.
//   bench_store fill DB RECORDS TASKS    RECORDS records over TASKS tasks (5 devices, 2 templates,
//                                        TASKS / 10 workloads), in batches of 1,000
//   bench_store latency DB TASKS SAMPLES a workload's best (Database::best) and its top 5
//                                        (top_k, as `optune query --shape` asks), for random tasks:
//                                        median and 95th percentile in milliseconds
//   bench_store writers DB N SECONDS     N writers at once, each its own connection, each writing
//                                        batches of 16 records (a tuning batch): records per second
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "optune/db/database.hpp"

namespace {

using optune::db::Database;
using optune::db::RecordFilter;
using optune::db::TaskKey;
using optune::db::TuningRecord;
using Clock = std::chrono::steady_clock;

constexpr int kDevices = 5;
constexpr int kTemplatesPerWorkload = 2;

nlohmann::json fingerprint(int device) {
  return {{"kind", "cpu"}, {"name", "Bench CPU " + std::to_string(device)}, {"arch", "x86_64"}, {"cores", 16 + device}};
}

// Task t: workload t / (devices * templates), its device and template from the rest.
TaskKey task_of(int task) {
  const int workload = task / (kDevices * kTemplatesPerWorkload);
  const int device = task % kDevices;
  const int kernel = (task / kDevices) % kTemplatesPerWorkload;
  return {"gemm.f32.M" + std::to_string(64 + workload) + ".N512.K512", kernel == 0 ? "gemm.cpu" : "gemm_dot.cpu", "cpu",
          "bench" + std::to_string(device)};
}

TuningRecord record_of(int task, std::int64_t serial) {
  const TaskKey key = task_of(task);
  TuningRecord record;
  record.workload_key = key.workload_key;
  record.template_name = key.template_name;
  record.target = key.target;
  record.device_id = key.device_id;
  record.device_fingerprint = fingerprint(task % kDevices);
  record.config = {{"tile_m", serial % 97}, {"tile_n", (serial / 97) % 64}, {"unroll", serial % 4}, {"serial", serial}};
  const double median = 1e-3 * (1.0 + static_cast<double>((serial * 7919) % 1000) / 100.0);
  record.costs = {median * 1.01, median, median * 0.99};
  record.median_seconds = median;
  const int m = 64 + task / (kDevices * kTemplatesPerWorkload);  // the workload's M (task_of)
  record.gflops = 2.0 * m * 512 * 512 / median / 1e9;
  record.build_seconds = 0.4;
  record.timestamp = 1.7e9 + static_cast<double>(serial);
  record.tuner = "xgb";
  record.run_id = "bench";
  record.optune_version = "bench";
  return record;
}

int fill(const std::string& location, std::int64_t records, int tasks) {
  auto database = Database::open(location);
  const auto start = Clock::now();
  constexpr std::int64_t kBatch = 1000;
  for (std::int64_t first = 0; first < records; first += kBatch) {
    std::vector<TuningRecord> batch;
    for (std::int64_t serial = first; serial < std::min(records, first + kBatch); ++serial)
      batch.push_back(record_of(static_cast<int>(serial % tasks), serial));
    database.insert(batch);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("fill %s: %lld records in %.1f s (%.0f records/s); %zu stored\n", location.c_str(),
              static_cast<long long>(records), seconds, static_cast<double>(records) / seconds, database.count());
  return 0;
}

struct Percentiles {
  double median_ms;
  double p95_ms;
};

Percentiles percentiles(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return {1e3 * seconds[seconds.size() / 2], 1e3 * seconds[seconds.size() * 95 / 100]};
}

int latency(const std::string& location, int tasks, int samples) {
  auto database = Database::open(location, Database::Mode::kReadOnly);
  std::mt19937 random(7);
  std::vector<double> best_seconds, top_seconds;
  for (int i = 0; i < samples; ++i) {
    const TaskKey task = task_of(static_cast<int>(random() % static_cast<unsigned>(tasks)));
    auto start = Clock::now();
    const auto best = database.best(task);
    best_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    if (!best) {
      std::fprintf(stderr, "bench_store: no best for %s\n", task.workload_key.c_str());
      return 1;
    }
    RecordFilter filter;
    filter.workload_key = task.workload_key;
    start = Clock::now();
    const auto top = database.top_k(filter, 5);
    top_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  const auto best = percentiles(best_seconds);
  const auto top = percentiles(top_seconds);
  std::printf("latency %s (%zu records, %d samples): best median %.2f ms p95 %.2f ms; top 5 of a workload median "
              "%.2f ms p95 %.2f ms\n",
              location.c_str(), database.count(), samples, best.median_ms, best.p95_ms, top.median_ms, top.p95_ms);
  return 0;
}

int writers(const std::string& location, int count, double seconds) {
  Database::open(location);  // the schema, before the writers race
  std::atomic<std::int64_t> written{0};
  std::atomic<bool> failed{false};
  const auto stop = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int w = 0; w < count; ++w) {
    threads.emplace_back([&, w] {
      try {
        auto database = Database::open(location);
        for (std::int64_t serial = 0; Clock::now() < stop; serial += 16) {
          std::vector<TuningRecord> batch;
          for (int i = 0; i < 16; ++i) {
            TuningRecord record = record_of(w, 100'000'000LL * (w + 1) + serial + i);
            record.run_id = "writer " + std::to_string(w) + " " + std::to_string(::getpid());
            batch.push_back(std::move(record));
          }
          database.insert(batch);
          written += 16;
        }
      } catch (const std::exception& error) {
        std::fprintf(stderr, "bench_store: writer %d: %s\n", w, error.what());
        failed = true;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::printf("writers %s: %d at once, %.0f records/s in all (batches of 16, %.0f s)\n", location.c_str(), count,
              static_cast<double>(written) / seconds, seconds);
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 4 && args[0] == "fill") return fill(args[1], std::stoll(args[2]), std::stoi(args[3]));
    if (args.size() == 4 && args[0] == "latency") return latency(args[1], std::stoi(args[2]), std::stoi(args[3]));
    if (args.size() == 4 && args[0] == "writers") return writers(args[1], std::stoi(args[2]), std::stod(args[3]));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_store: %s\n", error.what());
    return 1;
  }
  std::fprintf(stderr, "usage: bench_store fill DB RECORDS TASKS | latency DB TASKS SAMPLES | writers DB N SECONDS\n");
  return 2;
}
