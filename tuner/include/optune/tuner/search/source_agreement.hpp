// How far another device's records can be trusted on this device: Kendall's tau between the two
// devices' throughputs over the configs the task measured. Devices of one family mostly agree over
// a whole space (tau 0.65-0.85 between the convolution landscapes' GPUs) and still disagree where
// it matters: among the configs that are fast on one GPU, another may order them at random (the
// A100's optimum ranks 372nd on the A4000). A model-based tuner measures mostly where its sources
// point, so its own records are a sample of exactly that region, and the agreement there is what
// decides how much a source should still steer the search.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

// Configs measured by the task below which an agreement is not estimated (a handful of pairs
// says little).
inline constexpr std::size_t kMinSharedConfigs = 5;

// Another device's records of the task's workload, read in the task's space.
class SourceDevice {
 public:
  SourceDevice(std::vector<search_space::Config> configs, std::vector<double> gflops);
  // The device's throughput of `config` (0 for a failure): its record's, or, for a config it never
  // measured (a live space is far larger than any device's records), the mean of its records with
  // the fewest knobs different.
  double estimate(const search_space::Config& config) const;

 private:
  std::vector<search_space::Config> configs_;
  std::vector<double> gflops_;
  std::unordered_map<search_space::Config, double, search_space::ConfigHash> measured_;
};

// Kendall's tau (tau-a over the untied pairs: (concordant - discordant) / (concordant +
// discordant)) between the task's own throughputs (0 for a failed config, the slowest) and a
// source's estimates of the same configs; nullopt below kMinSharedConfigs configs or without an
// untied pair.
std::optional<double> rank_agreement(std::span<const double> own, std::span<const double> source);

}  // namespace optune::tuner
