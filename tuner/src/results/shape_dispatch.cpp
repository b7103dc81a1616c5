#include "optune/tuner/results/shape_dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace optune::tuner {
namespace {

// The slowdown a config that did not run on a shape counts as: far beyond any measured one, so
// that a leaf takes it only where no chosen config ran on every shape of the leaf.
constexpr double kNotRun = 1e3;
// A split must save at least this much total slowdown (half a percent of one shape's time):
// less is within the noise of the measurements it was fitted to.
constexpr double kLeastGain = 0.005;

double slowdown_or_penalty(const ConfigShapeMatrix& matrix, std::size_t config, std::size_t shape) {
  return matrix.slowdown(config, shape).value_or(kNotRun);
}

// Shapes no config ran on count for no config.
double total_slowdown(const ConfigShapeMatrix& matrix, const std::vector<std::size_t>& configs,
                      std::size_t extra_config) {
  double total = 0;
  for (std::size_t s = 0; s < matrix.shapes.size(); ++s) {
    if (!matrix.best(s)) continue;
    double least = slowdown_or_penalty(matrix, extra_config, s);
    for (auto c : configs) least = std::min(least, slowdown_or_penalty(matrix, c, s));
    total += least;
  }
  return total;
}

// The chosen config (an index into `chosen`) of least total slowdown over `shapes`, and that total;
// among those that may run over the whole box, where any may.
std::pair<std::size_t, double> leaf_config(const ConfigShapeMatrix& matrix, const std::vector<std::size_t>& chosen,
                                           const std::vector<std::size_t>& shapes, const DispatchLeaf& box,
                                           const RunsOverBox& runs_over) {
  std::vector<bool> allowed(chosen.size(), true);
  if (runs_over) {
    for (std::size_t i = 0; i < chosen.size(); ++i) allowed[i] = runs_over(i, box);
    if (std::find(allowed.begin(), allowed.end(), true) == allowed.end()) allowed.assign(chosen.size(), true);
  }
  std::pair<std::size_t, double> best{0, std::numeric_limits<double>::infinity()};
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (!allowed[i]) continue;
    double total = 0;
    for (auto s : shapes)
      if (matrix.best(s)) total += slowdown_or_penalty(matrix, chosen[i], s);
    if (total < best.second) best = {i, total};
  }
  return best;
}

struct GrowingLeaf {
  DispatchLeaf box;
  std::vector<std::size_t> shapes;
  double loss = 0;
};

struct Split {
  std::string extent;
  std::int64_t threshold = 0;  // extent <= threshold goes left
  double gain = 0;
};

struct Fit {
  const ConfigShapeMatrix& matrix;
  const std::vector<std::size_t>& chosen;
  const RunsOverBox& runs_over;

  GrowingLeaf leaf(DispatchLeaf box, std::vector<std::size_t> shapes) const {
    auto [config, loss] = leaf_config(matrix, chosen, shapes, box, runs_over);
    box.config = config;
    return {std::move(box), std::move(shapes), loss};
  }

  // The two leaves of a split.
  std::pair<GrowingLeaf, GrowingLeaf> split(const GrowingLeaf& parent, const std::string& extent,
                                            std::int64_t threshold) const {
    DispatchLeaf left_box = parent.box, right_box = parent.box;
    left_box.high[extent] = threshold;
    right_box.low[extent] = threshold + 1;
    std::vector<std::size_t> left, right;
    for (auto s : parent.shapes) (matrix.shapes[s].at(extent) <= threshold ? left : right).push_back(s);
    return {leaf(std::move(left_box), std::move(left)), leaf(std::move(right_box), std::move(right))};
  }

  // The split of a leaf's shapes that saves the most slowdown: between two neighbouring sampled
  // values of a ranged extent, at their geometric middle.
  std::optional<Split> best_split(const GrowingLeaf& parent) const {
    std::optional<Split> best;
    for (const auto& [name, low] : parent.box.low) {
      if (low == parent.box.high.at(name)) continue;
      std::set<std::int64_t> values;
      for (auto s : parent.shapes) values.insert(matrix.shapes[s].at(name));
      for (auto next = values.begin(); next != values.end() && std::next(next) != values.end(); ++next) {
        const std::int64_t a = *next, b = *std::next(next);
        const auto middle =
            static_cast<std::int64_t>(std::floor(std::sqrt(static_cast<double>(a) * static_cast<double>(b))));
        const std::int64_t threshold = std::clamp(middle, a, b - 1);
        auto [left, right] = split(parent, name, threshold);
        const double gain = parent.loss - left.loss - right.loss;
        if (gain >= kLeastGain && (!best || gain > best->gain + 1e-12)) best = Split{name, threshold, gain};
      }
    }
    return best;
  }
};

}  // namespace

std::optional<double> ConfigShapeMatrix::best(std::size_t shape) const {
  std::optional<double> best;
  for (const auto& row : seconds)
    if (row[shape] && (!best || *row[shape] < *best)) best = row[shape];
  return best;
}

std::optional<double> ConfigShapeMatrix::slowdown(std::size_t config, std::size_t shape) const {
  const auto& time = seconds.at(config).at(shape);
  const auto fastest = best(shape);
  if (!time || !fastest || *fastest <= 0) return std::nullopt;
  return *time / *fastest;
}

ConfigCover greedy_cover(const ConfigShapeMatrix& matrix, std::size_t most_configs, double within) {
  ConfigCover cover;
  std::set<std::size_t> uncovered;
  for (std::size_t s = 0; s < matrix.shapes.size(); ++s) uncovered.insert(s);
  auto covers = [&](std::size_t c, std::size_t s) {
    auto slowdown = matrix.slowdown(c, s);
    return slowdown && *slowdown <= 1 + within;
  };
  while (!uncovered.empty() && cover.chosen.size() < most_configs) {
    std::optional<std::size_t> pick;
    std::size_t pick_gain = 0;
    double pick_total = 0;
    for (std::size_t c = 0; c < matrix.config_count(); ++c) {
      if (std::find(cover.chosen.begin(), cover.chosen.end(), c) != cover.chosen.end()) continue;
      const auto gain = static_cast<std::size_t>(
          std::count_if(uncovered.begin(), uncovered.end(), [&](std::size_t s) { return covers(c, s); }));
      if (gain == 0) continue;
      const double total = total_slowdown(matrix, cover.chosen, c);
      if (!pick || gain > pick_gain || (gain == pick_gain && total < pick_total - 1e-12)) {
        pick = c;
        pick_gain = gain;
        pick_total = total;
      }
    }
    if (!pick) break;  // the shapes left: no config ran on them
    cover.chosen.push_back(*pick);
    std::erase_if(uncovered, [&](std::size_t s) { return covers(*pick, s); });
  }
  cover.uncovered.assign(uncovered.begin(), uncovered.end());
  return cover;
}

std::vector<DispatchLeaf> fit_leaves(const ConfigShapeMatrix& matrix, const std::vector<std::size_t>& chosen,
                                     const kernels::ExtentValues& low, const kernels::ExtentValues& high,
                                     std::size_t most_leaves, const RunsOverBox& runs_over) {
  if (chosen.empty()) throw std::invalid_argument("a dispatch rule needs at least one config");
  const Fit fit{matrix, chosen, runs_over};
  std::vector<std::size_t> all(matrix.shapes.size());
  for (std::size_t s = 0; s < all.size(); ++s) all[s] = s;
  std::vector<GrowingLeaf> leaves{fit.leaf({low, high, 0}, all)};
  // Best split first: the leaf whose split saves the most, until none saves enough or the leaves
  // reach their bound.
  while (leaves.size() < most_leaves) {
    std::optional<std::pair<std::size_t, Split>> next;
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (auto split = fit.best_split(leaves[i]); split && (!next || split->gain > next->second.gain))
        next = {i, *split};
    if (!next) break;
    const auto& [index, split] = *next;
    auto [left, right] = fit.split(leaves[index], split.extent, split.threshold);
    leaves[index] = std::move(left);
    leaves.insert(leaves.begin() + static_cast<std::ptrdiff_t>(index) + 1, std::move(right));
  }
  std::vector<DispatchLeaf> boxes;
  for (auto& leaf : leaves) boxes.push_back(std::move(leaf.box));
  return boxes;
}

std::optional<std::size_t> DispatchRule::leaf_of(const kernels::ExtentValues& extents) const {
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    bool inside = true;
    for (const auto& [name, low] : leaves[i].low) {
      auto value = extents.find(name);
      if (value == extents.end() || value->second < low || value->second > leaves[i].high.at(name)) {
        inside = false;
        break;
      }
    }
    if (inside) return i;
  }
  return std::nullopt;
}

std::string DispatchRule::leaf_name(std::size_t leaf) const {
  const DispatchLeaf& box = leaves.at(leaf);
  // The extents a rule decides on: those some leaf bounds more narrowly than the whole range.
  std::string name;
  for (const auto& [extent, low] : box.low) {
    const std::int64_t high = box.high.at(extent);
    bool decided = false;
    for (const auto& other : leaves) decided = decided || other.low.at(extent) != low || other.high.at(extent) != high;
    if (!decided) continue;
    name += (name.empty() ? "" : ",") + extent + "=" + std::to_string(low) +
            (high == low ? "" : ".." + std::to_string(high));
  }
  return name.empty() ? "all" : name;
}

nlohmann::json extents_json(const kernels::ExtentValues& extents) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, value] : extents) json[name] = value;
  return json;
}

kernels::ExtentValues extents_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("extents are not an object");
  kernels::ExtentValues extents;
  for (const auto& [name, value] : json.items()) {
    if (!value.is_number_integer()) throw std::invalid_argument("extent " + name + " is not a whole number");
    extents[name] = value.get<std::int64_t>();
  }
  return extents;
}

nlohmann::json rule_json(const DispatchRule& rule) {
  nlohmann::json configs = nlohmann::json::array(), leaves = nlohmann::json::array();
  for (std::size_t c = 0; c < rule.configs.size(); ++c)
    configs.push_back({{"config", rule.configs[c]}, {"from", rule.configs_from.at(c)}});
  for (std::size_t l = 0; l < rule.leaves.size(); ++l)
    leaves.push_back({{"name", rule.leaf_name(l)},
                      {"low", extents_json(rule.leaves[l].low)},
                      {"high", extents_json(rule.leaves[l].high)},
                      {"config", rule.leaves[l].config}});
  return {{"configs", configs}, {"leaves", leaves}};
}

DispatchRule rule_from_json(const nlohmann::json& json) {
  DispatchRule rule;
  try {
    for (const auto& config : json.at("configs")) {
      if (!config.at("config").is_object()) throw std::invalid_argument("a config is not an object");
      rule.configs.push_back(config.at("config"));
      rule.configs_from.push_back(config.at("from").get<std::string>());
    }
    for (const auto& leaf : json.at("leaves")) {
      DispatchLeaf box{extents_from_json(leaf.at("low")), extents_from_json(leaf.at("high")),
                       leaf.at("config").get<std::size_t>()};
      if (box.config >= rule.configs.size()) throw std::invalid_argument("a leaf names a config the rule lacks");
      for (const auto& [name, low] : box.low)
        if (!box.high.count(name) || box.high.at(name) < low)
          throw std::invalid_argument("a leaf's bounds of " + name + " are not an interval");
      rule.leaves.push_back(std::move(box));
    }
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument(std::string("malformed dispatch rule: ") + error.what());
  }
  if (rule.leaves.empty()) throw std::invalid_argument("a dispatch rule without leaves");
  return rule;
}

}  // namespace optune::tuner
