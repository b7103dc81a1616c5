#include "optune/tuner/search/model_based_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "optune/cost_model/batch_selection.hpp"
#include "optune/tuner/search/candidate_pool.hpp"

namespace optune::tuner {

cost_model::FeatureExtractor task_features(const measure::MeasureTask& task) {
  if (task.kernel_template == nullptr) return cost_model::FeatureExtractor(task.space);
  return cost_model::FeatureExtractor(task.space, task.workload, task.device, task.kernel_template);
}

ModelBasedTuner::ModelBasedTuner(std::string name, const measure::MeasureTask& task, std::uint64_t seed,
                                 const TaskHistory& history, std::unique_ptr<cost_model::CostModel> model,
                                 ModelBasedTunerOptions options, std::shared_ptr<const CandidatePool> pool)
    : name_(std::move(name)),
      task_(task),
      rng_(seed),
      options_(options),
      domain_(task.space, {}, std::move(pool)),
      model_(std::move(model)),
      measured_neighbours_(task.space) {
  if (task.kernel_template != nullptr && options_.cheap_share > 0)
    for (const auto& name : task.kernel_template->run_time_knobs()) {
      try {
        run_time_knobs_.push_back(task.space.knob_index(name));
      } catch (const std::out_of_range&) {
        // A hand-made space of the template's without the knob: nothing cheap to vary in it.
      }
    }
  auto own = parse_records(task.space, history.own);
  domain_.claim_all(own.configs);
  add_transfer(history.related);
  add_other_devices(history.other_devices);
  own_ = own;
  for (const auto& config : own_.configs) measured_neighbours_.add(config);
  weigh_sources();
  if (!own.configs.empty()) {
    model_->update(own.configs, own.gflops, own.noisy);  // a resumed run starts from what it measured
    remember_best(own.configs, own.gflops);
  } else if (model_->transfer_row_count() > 0) {
    model_->fit();
  }
}

void ModelBasedTuner::add_transfer(const std::vector<db::TuningRecord>& related) {
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
    model_->add_transfer(features, parsed.configs, parsed.gflops, group++, 1.0);
  }
}

// At most `limit` of the records, so that every fit stays cheap: the fastest quarter of them, where
// the model must rank well, and a uniform sample of the rest.
ParsedRecords ModelBasedTuner::keep_rows(ParsedRecords parsed, std::size_t limit) {
  if (parsed.configs.size() <= limit) return parsed;
  std::vector<std::size_t> order(parsed.configs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return parsed.gflops[a] > parsed.gflops[b]; });
  const std::size_t fastest = limit / 4;
  std::shuffle(order.begin() + static_cast<long>(fastest), order.end(), rng_);
  ParsedRecords kept;
  for (std::size_t i = 0; i < limit; ++i) {
    kept.configs.push_back(std::move(parsed.configs[order[i]]));
    kept.gflops.push_back(parsed.gflops[order[i]]);
    kept.noisy.push_back(parsed.noisy[order[i]]);
  }
  return kept;
}

// The same workload measured on other devices: one group per device, weighed by weigh_sources().
// Their configs are read in this task's space; features are this task's own.
void ModelBasedTuner::add_other_devices(const std::vector<db::TuningRecord>& records) {
  std::map<std::string, std::vector<db::TuningRecord>> by_device;
  for (const auto& record : records) by_device[record.device_id].push_back(record);
  int group = 1 << 20;  // apart from the other shapes' groups
  for (const auto& [device, device_records] : by_device) {
    auto all = parse_records(task_.space, device_records);
    if (all.configs.empty()) continue;
    Source source{group++, SourceDevice(all.configs, all.gflops), {}, 0, 0};
    auto parsed = keep_rows(std::move(all), options_.other_device_rows);
    source.rows = parsed.configs.size();
    model_->add_transfer(model_->features(), parsed.configs, parsed.gflops, source.group, 1.0);
    other_device_rows_ += parsed.configs.size();
    sources_.push_back(std::move(source));
  }
}

// Each source device counts as a share of the task's own records, not by its row count: a
// thousand rows of another GPU would otherwise outvote a hundred of this one's however wrong they
// are here (the model learns ranking pairs, and a group's pairs grow with its rows). The share is
// other_device_weight times the device's agreement with the own records measured so far, so a
// device that orders this one's configs as it does keeps steering the search, one that does not
// fades out, and with every source faded the search is the one without transfer. While the task
// has fewer than initial_random records, sources count as initial_random of them: the first
// batches are theirs to lead.
void ModelBasedTuner::weigh_sources() {
  const double own_rows = static_cast<double>(std::max(own_.configs.size(), options_.initial_random));
  for (auto& source : sources_) {
    for (std::size_t i = source.at_own.size(); i < own_.configs.size(); ++i)
      source.at_own.push_back(source.device.estimate(own_.configs[i]));
    const auto tau = rank_agreement(own_.gflops, source.at_own);
    const double agreement = tau ? std::max(0.0, *tau) : 1.0;  // too few own records: trusted yet
    source.weight = options_.other_device_weight * agreement * own_rows / static_cast<double>(source.rows);
    model_->set_transfer_weight(source.group, source.weight);
  }
}

// Whether the transfer rows may lead the search before the task has its own first training set:
// records of other shapes, or a source device that still counts.
bool ModelBasedTuner::transfer_leads() const {
  if (model_->transfer_row_count() > other_device_rows_) return true;
  return std::any_of(sources_.begin(), sources_.end(), [](const Source& source) { return source.weight > 0; });
}

void ModelBasedTuner::remember_best(const std::vector<search_space::Config>& configs,
                                    const std::vector<double>& gflops) {
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (gflops[i] > 0) best_measured_.push_back({configs[i], gflops[i]});
  std::sort(best_measured_.begin(), best_measured_.end(),
            [](const auto& a, const auto& b) { return a.score > b.score; });
  if (best_measured_.size() > options_.seeds) best_measured_.resize(options_.seeds);
}

// The best-scored unmeasured configs one knob away from the best measured one: exploitation
// around the incumbent that a model trained on few points may rank too low to reach globally.
// In the space, each knob's options are tried (at most kNeighbourOptions of a wide knob, drawn).
std::vector<search_space::Config> ModelBasedTuner::rank_neighbours(std::size_t n) {
  constexpr std::uint64_t kNeighbourOptions = 64;
  if (n == 0 || best_measured_.empty()) return {};
  const auto& best = best_measured_.front().config;
  std::vector<search_space::Config> near;
  if (domain_.pool()) {
    for (const auto& config : domain_.pool()->configs()) {
      if (domain_.is_visited(config)) continue;
      std::size_t distance = 0;
      for (std::size_t k = 0; k < best.options.size() && distance < 2; ++k) distance += config.options[k] != best.options[k];
      if (distance == 1) near.push_back(config);
    }
  } else {
    for (std::size_t k = 0; k < best.options.size(); ++k) {
      const std::uint64_t count = task_.space.option_count(k);
      std::uniform_int_distribution<std::uint64_t> draw(0, count - 1);
      for (std::uint64_t i = 0; i < std::min(count, kNeighbourOptions); ++i) {
        auto config = best;
        config.options[k] = static_cast<std::uint32_t>(count <= kNeighbourOptions ? i : draw(rng_));
        if (config == best || !domain_.is_open(config)) continue;
        if (std::find(near.begin(), near.end(), config) == near.end()) near.push_back(std::move(config));
      }
    }
  }
  return best_predicted(near, n);
}

std::vector<search_space::Config> ModelBasedTuner::best_predicted(const std::vector<search_space::Config>& configs,
                                                                  std::size_t n) const {
  const auto scores = model_->predict(configs);
  std::vector<std::size_t> order(configs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<search_space::Config> ranked;
  for (std::size_t i = 0; i < order.size() && ranked.size() < n; ++i) ranked.push_back(configs[order[i]]);
  return ranked;
}

double ModelBasedTuner::saturation_cost() const {
  if (options_.saturation_weight <= 0 || own_.configs.size() < 2) return 0;
  const auto predicted = model_->predict(own_.configs);
  const auto [low, high] = std::minmax_element(predicted.begin(), predicted.end());
  return options_.saturation_weight * (*high - *low);
}

std::vector<search_space::Config> ModelBasedTuner::rank_by_annealing(std::size_t n, std::size_t local) {
  const auto start = std::chrono::steady_clock::now();
  auto ranked = rank_neighbours(local);
  search_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<search_space::Config> seeds;
  for (const auto& best : best_measured_) seeds.push_back(best.config);
  ConfigSet exclude = domain_.visited();
  exclude.insert(ranked.begin(), ranked.end());
  const std::size_t global = n - std::min(n, ranked.size());
  if (global == 0) return ranked;
  const double saturation = saturation_cost();
  auto scorer = [this, saturation](std::span<const search_space::Config> configs) {
    auto scores = model_->predict(configs);
    for (std::size_t i = 0; i < scores.size() && saturation > 0; ++i)
      scores[i] -= saturation * measured_neighbours_.share(configs[i]);
    return scores;
  };
  auto found = cost_model::find_best_predicted(task_.space, scorer, global * options_.candidates_per_config,
                                               exclude, rng_, options_.annealing, seeds);
  search_seconds_ += found.seconds;
  for (auto& config : cost_model::select_diverse(found.best, global, options_.diversity)) ranked.push_back(std::move(config));
  return ranked;
}

// The whole pool is small enough to score at once: no annealing needed. Its features are
// extracted once; each decision predicts every config and skips the measured ones.
std::vector<search_space::Config> ModelBasedTuner::rank_pool(std::size_t n, std::size_t local) {
  auto start = std::chrono::steady_clock::now();
  const auto& configs = domain_.pool()->configs();
  if (pool_features_.rows == 0) pool_features_ = model_->features().extract_batch(configs);
  const auto scores = model_->predict_features(pool_features_);
  std::vector<search_space::Config> ranked = rank_neighbours(local);
  const double saturation = saturation_cost();
  std::vector<cost_model::ScoredConfig> scored;
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (!domain_.is_visited(configs[i]) && std::find(ranked.begin(), ranked.end(), configs[i]) == ranked.end())
      scored.push_back({configs[i], scores[i] - saturation * measured_neighbours_.share(configs[i])});
  const std::size_t global = n - std::min(n, ranked.size());
  std::size_t keep = std::min(scored.size(), global * options_.candidates_per_config);
  std::partial_sort(scored.begin(), scored.begin() + static_cast<long>(keep), scored.end(),
                    [](const auto& a, const auto& b) { return a.score > b.score; });
  scored.resize(keep);
  for (auto& config : cost_model::select_diverse(scored, global, options_.diversity)) ranked.push_back(std::move(config));
  search_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return ranked;
}

// How many of n picks go to the best measured config's neighbourhood: local_share of them, drawn
// per pick so that batches of one get it too.
std::size_t ModelBasedTuner::local_picks(std::size_t n) {
  std::bernoulli_distribution local(options_.local_share);
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) count += local(rng_);
  return count;
}

// The best-scored unmeasured run-time variants of the best measured configs (other blocks or
// threads of a built object): measurements without a compile.
std::vector<search_space::Config> ModelBasedTuner::rank_cheap(std::size_t n) {
  constexpr std::size_t kParents = 3;         // best measured configs whose variants are drawn
  constexpr std::size_t kDrawsPerParent = 256;
  if (n == 0 || run_time_knobs_.empty() || best_measured_.empty()) return {};
  const auto start = std::chrono::steady_clock::now();
  std::vector<search_space::Config> variants;
  ConfigSet seen;
  const std::size_t parents = std::min(kParents, best_measured_.size());
  if (domain_.pool()) {
    // A pool's configs that differ from a parent in run-time knobs alone.
    auto compiled_alike = [&](const search_space::Config& a, const search_space::Config& b) {
      for (std::size_t k = 0; k < a.options.size(); ++k)
        if (a.options[k] != b.options[k] &&
            std::find(run_time_knobs_.begin(), run_time_knobs_.end(), k) == run_time_knobs_.end())
          return false;
      return true;
    };
    for (const auto& config : domain_.pool()->configs())
      for (std::size_t p = 0; p < parents; ++p)
        if (!domain_.is_visited(config) && compiled_alike(config, best_measured_[p].config) &&
            seen.insert(config).second)
          variants.push_back(config);
  }
  for (std::size_t p = 0; p < parents && !domain_.pool(); ++p) {
    const auto& parent = best_measured_[p].config;
    for (std::size_t draw = 0; draw < kDrawsPerParent; ++draw) {
      auto config = parent;
      // Half the draws change one run-time knob, half all of them.
      const bool one = draw % 2 == 0;
      const std::size_t only = run_time_knobs_[draw / 2 % run_time_knobs_.size()];
      for (std::size_t k : run_time_knobs_) {
        if (one && k != only) continue;
        std::uniform_int_distribution<std::uint64_t> option(0, task_.space.option_count(k) - 1);
        config.options[k] = static_cast<std::uint32_t>(option(rng_));
      }
      if (domain_.is_open(config) && seen.insert(config).second) variants.push_back(std::move(config));
    }
  }
  auto ranked = best_predicted(variants, n);
  search_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return ranked;
}

std::vector<search_space::Config> ModelBasedTuner::next_batch(std::size_t n) {
  // Random until the model may lead: untrained (no record yet, or every candidate failed), or
  // fewer own measurements than options_.initial_random (a model of a handful of points, with no
  // transfer rows to lean on, ranks little better than chance and narrows the search too early).
  const bool model_leads = model_->is_trained() && (own_.configs.size() >= options_.initial_random || transfer_leads());
  const double epsilon = model_leads ? options_.epsilon : 1.0;
  std::vector<search_space::Config> cheap_picks;
  if (model_leads && !run_time_knobs_.empty()) {
    // A share of the batch among run-time variants of the best: cheap to measure. Drawn per pick,
    // as the local picks are, so batches of one get it too.
    std::bernoulli_distribution cheap(options_.cheap_share);
    std::size_t wanted = 0;
    for (std::size_t i = 0; i < n; ++i) wanted += cheap(rng_);
    cheap_picks = rank_cheap(wanted);
    domain_.claim_all(cheap_picks);
    n -= cheap_picks.size();
  }
  std::vector<search_space::Config> batch;
  if (n > 0 && domain_.pool()) {
    auto random_count = static_cast<std::size_t>(std::lround(epsilon * static_cast<double>(n)));
    const std::size_t wanted = n - std::min(n, random_count);
    auto ranked = model_leads ? rank_pool(wanted, local_picks(wanted)) : std::vector<search_space::Config>{};
    ConfigSet taken = domain_.visited();
    taken.insert(ranked.begin(), ranked.end());
    batch = ranked;
    for (auto& config : domain_.pool()->random(n - ranked.size(), taken, rng_)) batch.push_back(std::move(config));
  } else if (n > 0) {
    auto ranked = model_leads ? rank_by_annealing(n, local_picks(n)) : std::vector<search_space::Config>{};
    batch = cost_model::mix_in_random(task_.space, ranked, n, epsilon, domain_.visited(), rng_);
  }
  domain_.claim_all(batch);
  batch.insert(batch.begin(), cheap_picks.begin(), cheap_picks.end());
  return batch;
}

void ModelBasedTuner::update(const std::vector<search_space::Config>& configs,
                             const std::vector<measure::MeasureResult>& results) {
  std::vector<double> gflops;
  std::vector<bool> noisy;
  for (const auto& result : results) {
    gflops.push_back(quiet_gflops(result));
    noisy.push_back(is_noisy(result));
  }
  own_.configs.insert(own_.configs.end(), configs.begin(), configs.end());
  for (const auto& config : configs) measured_neighbours_.add(config);
  own_.gflops.insert(own_.gflops.end(), gflops.begin(), gflops.end());
  own_.noisy.insert(own_.noisy.end(), noisy.begin(), noisy.end());
  weigh_sources();
  model_->update(configs, gflops, noisy);
  remember_best(configs, gflops);
}

}  // namespace optune::tuner
