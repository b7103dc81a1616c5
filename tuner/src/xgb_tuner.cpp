#include "optune/tuner/xgb_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "optune/cost_model/batch_selection.hpp"
#include "optune/tuner/candidate_pool.hpp"

namespace optune::tuner {

XGBTuner::XGBTuner(const measure::MeasureTask& task, std::uint64_t seed, const TaskHistory& history,
                   XGBTunerOptions options, std::shared_ptr<const CandidatePool> pool)
    : task_(task),
      rng_(seed),
      options_(options),
      model_(cost_model::FeatureExtractor(task.space, task.workload, task.device, task.kernel_template),
             [&] {
               auto model = options.model;
               model.seed = seed;
               return model;
             }()),
      pool_(std::move(pool)) {
  auto own = parse_records(task.space, history.own);
  visited_.insert(own.configs.begin(), own.configs.end());
  add_transfer(history.related);
  if (!own.configs.empty()) {
    model_.update(own.configs, own.gflops);  // a resumed run starts from what it measured
    remember_best(own.configs, own.gflops);
  } else if (model_.transfer_row_count() > 0) {
    model_.fit();
  }
}

void XGBTuner::add_transfer(const std::vector<db::TuningRecord>& related) {
  if (task_.kernel_template == nullptr) return;  // a hand-made space: no other shapes to read
  std::map<std::string, std::vector<db::TuningRecord>> by_workload;
  for (const auto& record : related) by_workload[record.workload_key].push_back(record);
  int group = 1;  // group 0 is the task itself
  for (const auto& [key, records] : by_workload) {
    kernels::Workload workload;
    try {
      workload = kernels::parse_workload_key(key);
    } catch (const std::invalid_argument&) {
      continue;
    }
    auto space = task_.kernel_template->space(workload, task_.device);
    auto parsed = parse_records(space, records);
    if (parsed.configs.empty()) continue;
    cost_model::FeatureExtractor features(space, workload, task_.device, task_.kernel_template);
    auto rows = cost_model::make_training_rows(features, parsed.configs, parsed.gflops, group++);
    model_.add_transfer_rows(features.names(), rows);
  }
}

void XGBTuner::remember_best(const std::vector<search_space::Config>& configs,
                             const std::vector<double>& gflops) {
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (gflops[i] > 0) best_measured_.push_back({configs[i], gflops[i]});
  std::sort(best_measured_.begin(), best_measured_.end(),
            [](const auto& a, const auto& b) { return a.score > b.score; });
  if (best_measured_.size() > options_.seeds) best_measured_.resize(options_.seeds);
}

std::vector<search_space::Config> XGBTuner::rank_by_annealing(std::size_t n) {
  std::vector<search_space::Config> seeds;
  for (const auto& best : best_measured_) seeds.push_back(best.config);
  auto scorer = [this](std::span<const search_space::Config> configs) { return model_.predict(configs); };
  auto found = cost_model::find_best_predicted(task_.space, scorer, n * options_.candidates_per_config,
                                               visited_, rng_, options_.annealing, seeds);
  search_seconds_ += found.seconds;
  return cost_model::select_diverse(found.best, n, options_.diversity);
}

// The whole pool is small enough to score at once: no annealing needed.
std::vector<search_space::Config> XGBTuner::rank_pool(std::size_t n) {
  auto start = std::chrono::steady_clock::now();
  auto left = pool_->unvisited(visited_);
  auto scores = model_.predict(left);
  std::vector<cost_model::ScoredConfig> scored;
  for (std::size_t i = 0; i < left.size(); ++i) scored.push_back({left[i], scores[i]});
  std::size_t keep = std::min(scored.size(), n * options_.candidates_per_config);
  std::partial_sort(scored.begin(), scored.begin() + keep, scored.end(),
                    [](const auto& a, const auto& b) { return a.score > b.score; });
  scored.resize(keep);
  auto ranked = cost_model::select_diverse(scored, n, options_.diversity);
  search_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return ranked;
}

std::vector<search_space::Config> XGBTuner::next_batch(std::size_t n) {
  // Untrained (no record yet, or every candidate failed): all random.
  double epsilon = model_.is_trained() ? options_.epsilon : 1.0;
  std::vector<search_space::Config> batch;
  if (pool_) {
    auto ranked = model_.is_trained() ? rank_pool(n) : std::vector<search_space::Config>{};
    auto random_count = static_cast<std::size_t>(std::lround(epsilon * n));
    ranked.resize(std::min(ranked.size(), n - std::min(n, random_count)));
    ConfigSet taken = visited_;
    taken.insert(ranked.begin(), ranked.end());
    batch = ranked;
    for (auto& config : pool_->random(n - ranked.size(), taken, rng_)) batch.push_back(std::move(config));
  } else {
    auto ranked = model_.is_trained() ? rank_by_annealing(n) : std::vector<search_space::Config>{};
    batch = cost_model::mix_in_random(task_.space, ranked, n, epsilon, visited_, rng_);
  }
  visited_.insert(batch.begin(), batch.end());
  return batch;
}

void XGBTuner::update(const std::vector<search_space::Config>& configs,
                      const std::vector<measure::MeasureResult>& results) {
  std::vector<double> gflops;
  for (const auto& result : results) gflops.push_back(result.ok() ? result.gflops : 0.0);
  model_.update(configs, gflops);
  remember_best(configs, gflops);
}

}  // namespace optune::tuner
