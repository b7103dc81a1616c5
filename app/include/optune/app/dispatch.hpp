// A measured dispatch for a shape range or a shape list (`optune dispatch`, issue 38): tune the
// representative shapes, measure the finalists of each on every one of them (the configs x shapes
// matrix, interleaved rounds per shape), choose at most K configs by a greedy cover so that every
// shape stays within X% of its own best, fit a rule of boxes over the extents
// (tuner/results/shape_dispatch.hpp), validate it on held-out shapes (each tuned for its own best,
// then its own best, the rule's config and today's nearest-shape config measured together), and
// store the rule in the database, where `optune pick` and `optune apply-best` find it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/app/tuning.hpp"
#include "optune/db/dispatch_record.hpp"
#include "optune/tuner/results/shape_dispatch.hpp"

namespace optune::app {

struct DispatchRequest {
  // What tuning each shape takes: op, template, database, measuring, the lock; its trials are per
  // shape (0: tune nothing, use what is recorded). Its shape is not read.
  TuneRequest tune;
  std::vector<std::string> shapes;    // one range ("M=1..2048,N=768,K=768") or two shapes or more
  std::size_t samples = 16;           // a range's sampled shapes, at most (tuner::dispatch_shapes)
  std::vector<std::string> held_out;  // shapes to validate on; a range without them: held_out_count drawn
  std::size_t held_out_count = 4;
  std::size_t most_configs = 8;       // K
  double within = 0.05;               // X: 0.05 is 5%
  std::size_t finalists = 4;          // per representative shape
  int rounds = 3;                     // interleaved rounds of the matrix and the validation
  // Rounds of refinement at most: held-out shapes the rule misses become sampled shapes, the rule
  // is fitted again and checked on the other held-out shapes and fresh ones (a range's) in their place.
  std::size_t refine = 2;
};

// One held-out shape: the seconds of its own tuned best, the rule's config and the config of its
// nearest tuned shape (pick's answer without the rule), measured together; nullopt where one did
// not run (or, nearest: no tuned shape's config is valid there).
struct HeldOutCheck {
  std::string workload;
  std::string leaf;
  std::optional<double> own_best, rule, nearest;
  // The rule's config over `within` (0.05: 5%) slower than the shape's own best, or not run there.
  bool misses(double within) const { return own_best && (!rule || *rule > *own_best * (1 + within)); }
};

// One round of refinement: the checks that found misses, and the shapes (workload keys) that then
// joined the sampled ones.
struct Refinement {
  std::vector<HeldOutCheck> checks;
  std::vector<std::string> promoted;
};

struct DispatchOutcome {
  db::DispatchRecord stored;            // with its id; rule holds all below as JSON
  tuner::DispatchRule rule;
  std::string range;                    // the shapes as given, joined by " "
  std::vector<std::string> shape_keys;  // the representative shapes, the matrix's columns
  std::vector<nlohmann::json> finalists;  // the matrix's rows: each config in the space of finalist_from
  std::vector<std::string> finalist_from;
  tuner::ConfigShapeMatrix matrix;
  tuner::ConfigCover cover;
  std::vector<HeldOutCheck> held_out;    // the last round's checks
  std::vector<Refinement> refinements;   // the rounds before it, in order
};

// Throws BadInput for malformed shapes or ranges, a single plain shape, shapes of different
// operators or dtypes, K < 1, X < 0, before anything is measured.
DispatchOutcome make_dispatch(const DispatchRequest& request, const InstallPaths& paths, tuner::Progress& progress,
                              std::function<void(const std::string&)> log = nullptr);

// The stored rule's JSON (range, template, target, device_id, configs, leaves, within,
// most_configs, cover, shapes, finalists, matrix in seconds, uncovered, held_out) with the id.
nlohmann::json dispatch_json(const DispatchOutcome& outcome);

}  // namespace optune::app
