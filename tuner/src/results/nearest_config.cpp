#include "optune/tuner/results/nearest_config.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "optune/backends/registry.hpp"
#include "optune/cost_model/xgb_cost_model.hpp"
#include "optune/kernels/operator_catalog.hpp"
#include "optune/tuner/search/record_check.hpp"
#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

// The fastest records read per tuned shape: its best config may be invalid for the workload
// (a block far beyond a smaller extent), so the next ones are tried too.
constexpr std::size_t kCandidatesPerShape = 8;

// Candidates whose scores differ by less than this are a tie for the model (the ranking
// objective's scores are only an order), decided by the closeness of the shapes.
constexpr double kScoreTie = 1e-6;

using RecordsByWorkload = std::map<std::string, std::vector<db::TuningRecord>>;

// How far apart two shapes of one operator are: the sum of |log2 a - log2 b| over their extents
// (the cost model's shape features), so that 64 is as far from 128 as 256 from 512.
double shape_distance(const kernels::Workload& a, const kernels::Workload& b) {
  const auto& entry = kernels::operator_entry(a.op);
  std::map<std::string, float> of_b;
  for (const auto& [name, value] : entry.shape_features(b)) of_b[name] = value;
  double distance = 0;
  for (const auto& [name, value] : entry.shape_features(a)) distance += std::abs(value - of_b[name]);
  return distance;
}

// Whether a record's workload is another shape of the same kind of problem: a config of another
// dtype or layout schedules another kernel.
bool is_other_shape(const std::string& key, const kernels::Workload& workload) {
  if (key == workload.key()) return false;
  try {
    auto other = kernels::parse_workload_key(key);
    return other.op == workload.op && other.dtype == workload.dtype && other.layout_block == workload.layout_block &&
           other.nchw_input == workload.nchw_input;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// Records of the other shapes of `kernel` (an older template's records by the template that
// reads them now), by workload key, each shape's fastest first.
RecordsByWorkload other_shapes(const std::vector<db::TuningRecord>& records, const kernels::KernelTemplate& kernel,
                               const kernels::Workload& workload) {
  RecordsByWorkload by_workload;
  for (const auto& record : records) {
    if (!is_other_shape(record.workload_key, workload)) continue;
    try {
      if (&backends::template_of_record(record.template_name, record.config) != &kernel) continue;
    } catch (const std::invalid_argument&) {
      continue;  // a template this build does not have
    }
    by_workload[record.workload_key].push_back(record);
  }
  for (auto& [key, shape_records] : by_workload)
    std::stable_sort(shape_records.begin(), shape_records.end(), [](const auto& a, const auto& b) {
      return a.ok() != b.ok() ? a.ok() : a.median_seconds < b.median_seconds;
    });
  return by_workload;
}

struct Candidate {
  search_space::Config config;
  db::TuningRecord source;
  double distance = 0;
};

// Per tuned shape, its fastest config that is valid for the workload.
std::vector<Candidate> candidates_of(const RecordsByWorkload& best_by_workload, const search_space::ConfigSpace& space,
                                     const kernels::Workload& workload) {
  std::vector<Candidate> candidates;
  for (const auto& [key, records] : best_by_workload) {
    for (const auto& record : records) {  // fastest first
      if (!record.ok()) continue;
      auto config = config_for_shape(space, record.config);
      if (!config) continue;
      candidates.push_back({std::move(*config), record, shape_distance(workload, kernels::parse_workload_key(key))});
      break;
    }
  }
  return candidates;
}

// The cost model of the workload, trained on every record of the other shapes, each shape its
// own group (throughputs of different shapes are not comparable, their orders are).
cost_model::XGBCostModel trained_model(const kernels::KernelTemplate& kernel, const kernels::Workload& workload,
                                       const kernels::DeviceInfo& device, const search_space::ConfigSpace& space,
                                       const RecordsByWorkload& history) {
  cost_model::XGBCostModel model(cost_model::FeatureExtractor(space, workload, device, &kernel));
  int group = 1;  // group 0 is the workload's own, which has no rows
  for (const auto& [key, records] : history) {
    auto other = kernels::parse_workload_key(key);
    auto other_space = kernel.space(other, device);
    auto parsed = parse_records(other_space, records);
    if (parsed.configs.empty()) continue;
    model.add_transfer(cost_model::FeatureExtractor(other_space, other, device, &kernel), parsed.configs,
                       parsed.gflops, group++, 1.0);
  }
  model.fit();
  return model;
}

// The index of the candidate the model ranks first; ties (an untrained model scores all 0) go to
// the closest shape, then to the faster source record.
std::size_t best_candidate(const std::vector<Candidate>& candidates, const std::vector<double>& scores) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  auto better = [&](std::size_t a, std::size_t b) {
    if (std::abs(scores[a] - scores[b]) > kScoreTie) return scores[a] > scores[b];
    if (candidates[a].distance != candidates[b].distance) return candidates[a].distance < candidates[b].distance;
    return candidates[a].source.gflops > candidates[b].source.gflops;
  };
  return *std::min_element(order.begin(), order.end(), better);
}

bool scores_differ(const std::vector<double>& scores) {
  return std::any_of(scores.begin(), scores.end(), [&](double s) { return std::abs(s - scores.front()) > kScoreTie; });
}

std::optional<NearestConfig> nearest_of_template(const kernels::KernelTemplate& kernel, const kernels::Workload& workload,
                                                 const kernels::DeviceInfo& device,
                                                 const std::vector<db::TuningRecord>& fastest,
                                                 const std::vector<db::TuningRecord>& all, NearestRanking ranking) {
  auto space = kernel.space(workload, device);
  auto candidates = candidates_of(other_shapes(fastest, kernel, workload), space, workload);
  if (candidates.empty()) return std::nullopt;
  std::vector<double> scores(candidates.size(), 0.0);  // all tied: the closest shape wins
  if (ranking == NearestRanking::kCostModel) {
    auto model = trained_model(kernel, workload, device, space, other_shapes(all, kernel, workload));
    std::vector<search_space::Config> configs;
    for (const auto& candidate : candidates) configs.push_back(candidate.config);
    scores = model.predict(configs);
  }
  const std::size_t chosen = best_candidate(candidates, scores);
  NearestConfig nearest{&kernel, std::move(space), std::move(candidates[chosen].config),
                        std::move(candidates[chosen].source), scores_differ(scores), candidates.size()};
  return nearest;
}

}  // namespace

std::optional<search_space::Config> config_for_shape(const search_space::ConfigSpace& space,
                                                     const nlohmann::json& config) {
  if (!config.is_object()) return std::nullopt;
  nlohmann::json resized = config;
  for (const auto& knob : space.knobs()) {
    const auto* split = std::get_if<search_space::SplitKnob>(&knob);
    if (!split || !resized.contains(split->name)) continue;
    auto& factors = resized[split->name];
    if (!factors.is_array() || factors.empty()) return std::nullopt;
    std::int64_t inner = 1;
    for (std::size_t i = 1; i < factors.size(); ++i) {
      if (!factors[i].is_number_integer() || factors[i].get<std::int64_t>() < 1) return std::nullopt;
      inner *= factors[i].get<std::int64_t>();
    }
    factors[0] = (split->extent + inner - 1) / inner;
  }
  try {
    auto point = space.from_json(resized);
    if (!space.is_valid(point)) return std::nullopt;
    return point;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::optional<NearestConfig> nearest_config(const db::Database& database, const kernels::Workload& workload,
                                            const kernels::Target& target, const kernels::DeviceInfo& device,
                                            NearestRanking ranking) {
  db::RecordFilter filter;
  filter.op = std::string(kernels::op_name(workload.op));
  filter.target = target.str();
  filter.device = device.fingerprint_id();
  std::vector<std::string> passed_over;  // forged or corrupted records are no candidates
  const auto fastest = checked_top_k(database, filter, kCandidatesPerShape, passed_over);
  if (fastest.empty()) return std::nullopt;
  const auto all = database.records(filter);
  for (const auto* kernel : backends::templates_for(workload, target.backend, device))
    if (auto nearest = nearest_of_template(*kernel, workload, device, fastest, all, ranking)) return nearest;
  return std::nullopt;
}

}  // namespace optune::tuner
