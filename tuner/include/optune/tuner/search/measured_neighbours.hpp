// MeasuredNeighbours: how much of a config's one-knob neighbourhood is measured already. xgb
// weighs its global picks by it: a model of few points predicts a plateau of near-equal configs
// alike and then spends its picks walking the plateau's unimportant knobs (a PoCL convolution's
// 4 x 1 tiles in every block shape, 100 evaluations in a replay), while the best configs need two
// knobs changed at once that each look worse alone. A config whose neighbours are mostly measured
// says little that they did not; one among unmeasured neighbours may open a region.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

class MeasuredNeighbours {
 public:
  explicit MeasuredNeighbours(const search_space::ConfigSpace& space);
  void add(const search_space::Config& measured);
  // Measured configs one knob away from `config` (an unmeasured one: a measured config would count
  // itself once a knob), over the one-knob neighbours the space's knobs allow it, invalid ones
  // included: 0 when none is measured, at most 1.
  double share(const search_space::Config& config) const;

 private:
  // Per measured config and knob k, the config with knob k's option wildcarded: the key every
  // config differing from it in knob k alone shares.
  std::unordered_map<search_space::Config, int, search_space::ConfigHash> around_;
  double neighbours_ = 0;  // the sum over knobs of their options less one
};

}  // namespace optune::tuner
