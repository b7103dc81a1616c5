// A measured dispatch for a shape range (issue 38): which of a few configs runs each shape of the
// range. From a configs x shapes matrix of measured times (the finalists of every representative
// shape, each measured on every representative shape), choose at most K configs so that every
// shape stays within X% of its own best (a greedy set cover: each step takes the config that
// brings the most shapes not yet within X% of their best there, ties to the smaller total
// slowdown), then fit a rule over the extents: a small decision tree whose leaves are boxes of the
// range (each extent an interval), grown best split first, each split at the geometric middle of
// two neighbouring sampled values (a kernel's best config changes with an extent's ratio to its
// tiles, which is multiplicative), each leaf the chosen config of least total slowdown over its
// shapes. With one ranged extent the leaves are intervals. The rule is data: `optune pick`
// answers with the leaf holding a shape, and `optune apply-best` compiles the boxes into the
// header (app/dispatch.hpp measures and stores it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/kernels/operator_catalog.hpp"

namespace optune::tuner {

// seconds[c][s]: config c measured on shape s; nullopt where it is not valid there or failed.
struct ConfigShapeMatrix {
  std::vector<kernels::ExtentValues> shapes;
  std::vector<std::vector<std::optional<double>>> seconds;
  std::size_t config_count() const { return seconds.size(); }
  // The fastest time of shape s over every config; nullopt when none ran.
  std::optional<double> best(std::size_t shape) const;
  // seconds[c][s] over the shape's best (1 = the best); nullopt where c did not run there.
  std::optional<double> slowdown(std::size_t config, std::size_t shape) const;
};

struct ConfigCover {
  std::vector<std::size_t> chosen;     // config indices, in the order the cover took them
  std::vector<std::size_t> uncovered;  // shapes no chosen config runs within X% of their best
};

// At most `most_configs` configs so that every shape is within `within` (0.05: 5%) of its best,
// greedily; shapes that no config ran are left out of the cover (and listed as uncovered).
ConfigCover greedy_cover(const ConfigShapeMatrix& matrix, std::size_t most_configs, double within);

// A box of the range: every extent between low and high, both included.
struct DispatchLeaf {
  kernels::ExtentValues low, high;
  std::size_t config = 0;  // an index into DispatchRule::configs
};

struct DispatchRule {
  std::vector<nlohmann::json> configs;  // knob values by name, each in the space of configs_from
  std::vector<std::string> configs_from;  // the workload key each config was tuned for
  std::vector<DispatchLeaf> leaves;      // disjoint boxes covering the range

  // The leaf whose box holds the extents; nullopt outside the range.
  std::optional<std::size_t> leaf_of(const kernels::ExtentValues& extents) const;
  // "M=1..24" (the extents whose bounds differ; "M=64" for a point; "all" for a one-leaf rule).
  std::string leaf_name(std::size_t leaf) const;
};

// Whether the chosen config `chosen_index` may run on every shape of a box (its template's rules
// hold at the box's corners: a cache block not far beyond the smallest extent, say).
using RunsOverBox = std::function<bool(std::size_t chosen_index, const DispatchLeaf& box)>;

// The leaves of a rule over the range low..high: the shapes of `matrix` (inside the range), the
// configs `chosen` (indices of the matrix; DispatchLeaf::config indexes this list), at most
// `most_leaves` leaves. A leaf's config is the chosen one of least total slowdown over the
// leaf's shapes among those that `runs_over` its box (any, where none does or it is not given);
// a config that did not run on one of the shapes is taken there only where every one failed.
std::vector<DispatchLeaf> fit_leaves(const ConfigShapeMatrix& matrix, const std::vector<std::size_t>& chosen,
                                     const kernels::ExtentValues& low, const kernels::ExtentValues& high,
                                     std::size_t most_leaves = 16, const RunsOverBox& runs_over = {});

nlohmann::json extents_json(const kernels::ExtentValues& extents);
kernels::ExtentValues extents_from_json(const nlohmann::json& json);  // throws std::invalid_argument
nlohmann::json rule_json(const DispatchRule& rule);
DispatchRule rule_from_json(const nlohmann::json& json);  // throws std::invalid_argument

}  // namespace optune::tuner
