// Shape ranges (`optune tune --shape M=1..512,N=768,K=768`, issue 22 item 4): a shape whose
// extents may be ranges LOW..HIGH, for a dynamic extent such as a sequence length. Tuning a range
// tunes a few representative shapes of it; their records are what covers the rest: any shape in
// the range then runs the config of its nearest tuned shape (`optune pick`, `optune apply-best`;
// tuner/results/nearest_config.hpp) instead of the default.
//
// Which shapes: for each ranged extent, points log-spaced from LOW to HIGH, both ends included,
// about one per 1.25 octaves, so that an untuned shape is at most ~1.5x from a tuned one in that
// extent (farther where the cap spaces them wider): at most 8 for one ranged extent, 3 each for
// two, 2 each for more. Log spacing because a kernel's best config changes with an extent's ratio
// to its tiles and caches, which is multiplicative: equal steps in log2 cover 1..32 as well as
// 32..512. The ends are included because a model ranks worst where it extrapolates.
// The budget bounds the shapes: never more than kMostShapes (four ranged extents of 2 points
// would be 16, nine 512), nor more than the trials, since every shape needs a trial. Where the
// points make more, the range whose points lie closest together gives one up, until they fit; a
// range of one point is its middle in log2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace optune::tuner {

// Whether a `--shape` names a range (an extent written LOW..HIGH).
bool is_shape_range(std::string_view shape_text);

inline constexpr std::size_t kMostShapes = 9;

// The representative shapes of a range as `--shape` texts (each range replaced by one point), in
// the order of the parts, each range's points from LOW to HIGH; at most `most_shapes` of them (the
// trials of the budget), and at most kMostShapes. Throws std::invalid_argument with one line
// naming the range when a range is malformed (not two whole numbers around "..") or empty
// (LOW > HIGH). The shapes themselves are the operator's to check (kernels::parse_workload).
std::vector<std::string> representative_shapes(std::string_view shape_text, std::size_t most_shapes = kMostShapes);

// The points of one range LOW..HIGH (1 <= LOW <= HIGH): log-spaced about one per
// `octaves_per_point`, both ends, at most `most` (one point: the middle in log2).
inline constexpr double kOctavesPerPoint = 1.25;
std::vector<std::int64_t> range_points(std::int64_t low, std::int64_t high, std::size_t most,
                                       double octaves_per_point = kOctavesPerPoint);

// The shapes a measured dispatch samples (optune dispatch): as representative_shapes, but about
// two points per octave (a GPU kernel's tiles make its best config change within an octave: the
// H200's bf16 GEMM at M = 340 ran 1.5x slower on the config of M = 232 or 689) and not capped
// at kMostShapes: at most `most_shapes` in all, each ranged extent of r at most the r-th root.
inline constexpr double kDispatchOctavesPerPoint = 0.5;
std::vector<std::string> dispatch_shapes(std::string_view shape_text, std::size_t most_shapes);

// Shapes of a range outside `sampled` (its shapes' --shape texts), to validate what those decided
// on (a dispatch's rule): each ranged extent drawn log-uniformly from LOW..HIGH, the same draw for
// the same range in every run; at most `count` of them (fewer where the range holds no more).
// Throws as representative_shapes.
std::vector<std::string> held_out_shapes(std::string_view shape_text, std::size_t count,
                                         const std::vector<std::string>& sampled);

// The trials each of `shapes` representative shapes gets from a budget of `trials`: an even
// split, the first ones one more where it does not divide, at least 1 each (representative_shapes
// keeps shapes <= trials, so the split spends the budget and no more).
std::vector<std::size_t> split_trials(std::size_t trials, std::size_t shapes);

}  // namespace optune::tuner
