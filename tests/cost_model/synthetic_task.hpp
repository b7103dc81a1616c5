// A synthetic tuning task for the cost model tests: a space of six knobs of every kind, and a
// known throughput that is a smooth function of the knob VALUES with interactions, the same for
// every shape, so that what a model learns on one shape holds on another.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::cost_model::testing {

using search_space::Config;
using search_space::ConfigSpace;
using search_space::ConfigView;

// The space of a GEMM-like template for extents M and N: two splits, a choice, a bool, an int
// range and a loop order, with a constraint on the tile's area.
inline ConfigSpace synthetic_space(std::int64_t m = 256, std::int64_t n = 128) {
  ConfigSpace space;
  space.add(search_space::SplitKnob{"tile_m", m, 2, search_space::SplitPolicy::kDivisors, {}, 0});
  space.add(search_space::SplitKnob{"tile_n", n, 2, search_space::SplitPolicy::kDivisors, {}, 0});
  space.add(search_space::ChoiceKnob{"layout", {"row", "col", "blocked", "packed"}});
  space.add(search_space::BoolKnob{"unroll"});
  space.add(search_space::IntRangeKnob{"vector", 1, 16, 1});
  space.add(search_space::PermutationKnob{"order", {"i", "j", "k"}});
  space.add_constraint("tile area at most 2048", [](const ConfigView& view) {
    return view.split_factor("tile_m", 1) * view.split_factor("tile_n", 1) <= 2048;
  });
  return space;
}

inline kernels::Workload gemm_workload(std::int64_t m, std::int64_t n, std::int64_t k = 256) {
  kernels::Workload workload;
  workload.op = kernels::Op::kGemm;
  workload.shape = kernels::GemmShape{m, n, k};
  return workload;
}

// GFLOP/s of a config: a peak at tile 16x8, a ridge along tm + tn = 7, layout and order
// preferences, unrolling that pays more with taller tiles, a best vector width of 8.
inline double true_gflops(const ConfigSpace& space, const Config& config) {
  const ConfigView view(space, config);
  const double tm = std::log2(static_cast<double>(view.split_factor("tile_m", 1)));
  const double tn = std::log2(static_cast<double>(view.split_factor("tile_n", 1)));
  double g = 100.0 * std::exp(-(tm - 4) * (tm - 4) / 8 - (tn - 3) * (tn - 3) / 6 -
                              0.1 * (tm + tn - 7) * (tm + tn - 7));
  const std::string& layout = view.choice("layout");
  g *= layout == "row" ? 1.0 : layout == "col" ? 0.7 : layout == "blocked" ? 0.85 : 0.55;
  if (view.flag("unroll")) g *= 1.0 + 0.08 * tn;
  g *= 1.0 - 0.04 * std::abs(static_cast<double>(view.integer("vector")) - 8);
  const auto order = view.permutation("order");
  g *= order.back() == "j" ? 1.0 : 0.8;
  return g;
}

inline std::vector<double> true_gflops(const ConfigSpace& space,
                                       const std::vector<Config>& configs) {
  std::vector<double> result;
  for (const Config& config : configs) result.push_back(true_gflops(space, config));
  return result;
}

// Ranks from 1, ties given their mean rank.
inline std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return values[a] < values[b]; });
  std::vector<double> result(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (std::size_t t = i; t <= j; ++t) result[order[t]] = (static_cast<double>(i + j) / 2) + 1;
    i = j + 1;
  }
  return result;
}

inline double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return cov / std::sqrt(va * vb);
}

// Disjoint training and held-out samples of valid configs.
struct Split {
  std::vector<Config> train;
  std::vector<Config> held_out;
};

inline Split sample_split(const ConfigSpace& space, std::size_t train, std::size_t held_out,
                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Config> all = space.sample_valid_distinct(rng, train + held_out);
  Split split;
  split.train.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(train));
  split.held_out.assign(all.begin() + static_cast<std::ptrdiff_t>(train), all.end());
  return split;
}

}  // namespace optune::cost_model::testing
