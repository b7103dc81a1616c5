// The config a workload that was never tuned runs when other shapes of its template were tuned on
// the device (issue 22 item 4): among the fastest config recorded for each other shape, the one
// that the cost model, trained on every record of the template and device across shapes, ranks
// best for this workload, among those valid in its space. `optune pick` shows it and
// `optune apply-best` writes it into the header's rows, so an untuned shape no longer falls back
// to the one fixed default config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/target.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::tuner {

struct NearestConfig {
  const kernels::KernelTemplate* kernel = nullptr;
  search_space::ConfigSpace space;  // the workload's own space of `kernel`
  search_space::Config config;      // a point of `space`
  db::TuningRecord source;          // the record of the tuned shape the config came from
  // false: the model could not be trained (too few successful records) or could not tell the
  // candidates apart; the candidate of the closest shape (log2 of the extents) won.
  bool ranked_by_model = false;
  std::size_t candidates = 0;       // tuned shapes whose best config is valid for the workload
};

// A stored config read in the space of another shape of its template: a split's outer factor
// (the number of blocks) follows the extent, its inner factors are kept. nullopt when the config
// is not a valid point of `space` (an inner factor that is not an option here, or a broken
// constraint, e.g. a cache block far beyond a small extent).
std::optional<search_space::Config> config_for_shape(const search_space::ConfigSpace& space,
                                                     const nlohmann::json& config);

// How the candidates are ranked: by the cost model (what pick and apply-best do), or by the
// closeness of the shapes alone (the held-out-shape benchmark's baseline, tests/bench).
enum class NearestRanking { kCostModel, kClosestShape };

// The nearest config of `workload` on `device` from the records of `target`: the templates that
// apply to the workload are tried in priority order, and the first with a candidate gives it.
// Records of the workload itself are left out (a tuned workload runs its own best). nullopt when
// no other shape of an applicable template was tuned there, or none of their configs is valid.
std::optional<NearestConfig> nearest_config(const db::Database& database, const kernels::Workload& workload,
                                            const kernels::Target& target, const kernels::DeviceInfo& device,
                                            NearestRanking ranking = NearestRanking::kCostModel);

}  // namespace optune::tuner
