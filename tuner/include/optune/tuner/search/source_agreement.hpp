// How far another device's records can be trusted on this device: Kendall's tau between the two
// devices' throughputs over the configs both measured. Devices of one family mostly agree over a
// whole space (tau 0.65-0.85 between the convolution landscapes' GPUs) and still disagree where it
// matters: among the configs that are fast on one GPU, another may order them at random (the
// A100's optimum ranks 372nd on the A4000). A model-based tuner measures mostly where its sources
// point, so its own records are a sample of exactly that region, and the agreement there is what
// decides how much a source should still steer the search.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

// Configs shared with a source below which its agreement is not estimated (a handful of pairs
// says little).
inline constexpr std::size_t kMinSharedConfigs = 5;

using Throughputs = std::unordered_map<search_space::Config, double, search_space::ConfigHash>;

// Kendall's tau (tau-a over the untied pairs: (concordant - discordant) / (concordant +
// discordant)) between `source` and the task's own throughputs (0 for a failed config, the
// slowest) over the configs both hold; nullopt below kMinSharedConfigs of them or without an
// untied pair.
std::optional<double> rank_agreement(const Throughputs& source, const std::vector<search_space::Config>& own_configs,
                                     const std::vector<double>& own_gflops);

}  // namespace optune::tuner
