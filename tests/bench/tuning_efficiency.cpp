// bench_tuning_efficiency: how many trials each tuner needs on the CPU GEMM space, replayed over
// a measured landscape (every figure it prints is a REPLAYED number, labelled as such).
//
// A landscape is a database of configs measured live, e.g. by `optune tune --tuner random`
// (tests/bench/tuning_efficiency.sh records one). Replaying it, every tuner searches the same pool
// of measured configs (CandidatePool) and is answered with the recorded GFLOP/s instead of a new
// measurement, so 5 seeds x 3 tuners x 3 shapes cost seconds instead of hours, and every tuner
// faces identical numbers. For each shape it reports the median number of trials each tuner needs
// to reach 95% of the best config in the landscape, and the best-so-far curve.
//
//   build/tests/bench/bench_tuning_efficiency --landscape landscape.db [--seeds 5] [--budget 300]
//       [--batch 8] [--share 0.95] [--tuners xgb,ga,random]
//
// It also times the xgb model step (fit + search over the whole space) at 1000 records against
// the live wall time those 1000 trials took, the cost-model overhead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/tuner/replay/landscape_replay.hpp"
#include "optune/tuner/search/task_history.hpp"
#include "optune/tuner/search/xgb_tuner.hpp"

namespace {

using namespace optune;

struct Options {
  std::string landscape;
  int seeds = 5;
  std::size_t budget = 300;
  std::size_t batch = 8;
  double share = 0.95;
  std::vector<std::string> tuners = {"xgb", "ga", "random"};
};

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--landscape") options.landscape = value;
    else if (flag == "--seeds") options.seeds = std::stoi(value);
    else if (flag == "--budget") options.budget = std::stoul(value);
    else if (flag == "--batch") options.batch = std::stoul(value);
    else if (flag == "--share") options.share = std::stod(value);
    else if (flag == "--tuners") options.tuners = split(value, ',');
  }
  if (options.landscape.empty()) {
    std::fprintf(stderr, "usage: bench_tuning_efficiency --landscape FILE [--seeds N] [--budget N] ...\n");
    std::exit(2);
  }
  return options;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void report(const tuner::Landscape& landscape, const Options& options, std::map<std::string, std::vector<double>>& medians) {
  std::printf("\n### %s (replayed: %zu measured configs, best %.1f GFLOP/s, target %.0f%% = %.1f)\n\n",
              landscape.task->workload.key().c_str(), landscape.configs.size(), landscape.best,
              options.share * 100, options.share * landscape.best);
  const std::vector<std::size_t> checkpoints = {10, 25, 50, 100, 200, 300};
  std::printf("| tuner | median trials to target | per seed | ");
  for (auto c : checkpoints) if (c <= options.budget) std::printf("best@%zu | ", c);
  std::printf("tuner s/run |\n|---|---|---|");
  for (auto c : checkpoints) if (c <= options.budget) std::printf("---|");
  std::printf("---|\n");
  for (const auto& name : options.tuners) {
    std::vector<double> trials, overhead;
    std::vector<std::vector<double>> curves;
    std::string per_seed;
    for (int seed = 1; seed <= options.seeds; ++seed) {
      auto run = tuner::replay(landscape, name, seed, options.budget, options.batch, options.share * landscape.best);
      // Not reached within the budget counts as budget + 1 (a censored, optimistic value).
      double t = run.trials_to_target ? run.trials_to_target : options.budget + 1;
      trials.push_back(t);
      per_seed += (per_seed.empty() ? "" : " ") + (run.trials_to_target ? std::to_string(run.trials_to_target) : ">" + std::to_string(options.budget));
      curves.push_back(run.best_so_far);
      overhead.push_back(run.overhead_seconds);
    }
    double m = median(trials);
    medians[name].push_back(m);
    std::printf("| %s | %s | %s | ", name.c_str(), m > options.budget ? (">" + std::to_string(options.budget)).c_str() : std::to_string(static_cast<int>(m)).c_str(), per_seed.c_str());
    for (auto c : checkpoints) {
      if (c > options.budget) continue;
      std::vector<double> at;
      for (const auto& curve : curves) at.push_back(curve.empty() ? 0 : curve[std::min(c, curve.size()) - 1]);
      std::printf("%.1f%% | ", 100 * median(at) / landscape.best);
    }
    std::printf("%.2f |\n", median(overhead));
  }
}

// The model step on the whole space (not the pool) with 1000 records: what a live xgb run pays per
// batch once it has measured 1000 configs.
void report_overhead(const tuner::Landscape& landscape, const Options& options) {
  if (landscape.records.size() < 100) return;
  tuner::TaskHistory history;
  history.own = landscape.records;
  auto start = std::chrono::steady_clock::now();
  auto xgb = tuner::make_xgb_tuner(*landscape.task, 1, history);  // fits on every record
  auto batch = xgb->next_batch(options.batch);                     // annealing over the whole space
  double model = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double live_per_batch = landscape.live_seconds / landscape.records.size() * options.batch;
  std::printf("\nmodel step at %zu records (fit + annealing for a batch of %zu): %.2f s; live measuring of a "
              "batch took %.1f s: overhead %.1f%%\n",
              landscape.records.size(), options.batch, model, live_per_batch, 100 * model / (model + live_per_batch));
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  auto database = db::Database::open(options.landscape, db::Database::Mode::kReadOnly);
  auto landscapes = tuner::load_landscapes(database);
  std::printf("REPLAYED tuning efficiency: %d seeds, budget %zu trials, batches of %zu, target %.0f%% of the "
              "landscape's best\n", options.seeds, options.budget, options.batch, options.share * 100);
  std::map<std::string, std::vector<double>> medians;
  for (const auto& landscape : landscapes) {
    report(landscape, options, medians);
    report_overhead(landscape, options);
  }
  if (medians.count("xgb") && medians.count("random")) {
    std::printf("\nmedian trials to target, xgb / random, per shape:");
    for (std::size_t i = 0; i < medians["xgb"].size(); ++i)
      std::printf(" %.2f", medians["xgb"][i] / medians["random"][i]);
    std::printf("\n");
  }
  return 0;
}
