// Shape ranges (`optune tune --shape M=1..512,N=768,K=768`, issue 22 item 4): a shape whose
// extents may be ranges LOW..HIGH, for a dynamic extent such as a sequence length. Tuning a range
// tunes a few representative shapes of it; their records are what covers the rest: any shape in
// the range then runs the config of its nearest tuned shape (`optune pick`, `optune apply-best`;
// tuner/results/nearest_config.hpp) instead of the default.
//
// Which shapes: for each ranged extent, points log-spaced from LOW to HIGH, both ends included,
// about one per 1.25 octaves, so that an untuned shape is at most ~1.5x from a tuned one in that
// extent (farther where the cap spaces them wider): at most 8 for one ranged extent, 3 each for
// two, 2 each for more (so that a range never asks for more than 9 shapes). Log spacing because a kernel's best config changes with an
// extent's ratio to its tiles and caches, which is multiplicative: equal steps in log2 cover 1..32
// as well as 32..512. The ends are included because a model ranks worst where it extrapolates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace optune::tuner {

// Whether a `--shape` names a range (an extent written LOW..HIGH).
bool is_shape_range(std::string_view shape_text);

// The representative shapes of a range as `--shape` texts (each range replaced by one point), in
// the order of the parts, each range's points from LOW to HIGH. Throws std::invalid_argument with one line naming the range when a range is
// malformed (not two whole numbers around "..") or empty (LOW > HIGH). The shapes themselves are
// the operator's to check (kernels::parse_workload).
std::vector<std::string> representative_shapes(std::string_view shape_text);

// The points of one range LOW..HIGH (1 <= LOW <= HIGH): log-spaced, both ends, at most `most`.
std::vector<std::int64_t> range_points(std::int64_t low, std::int64_t high, std::size_t most);

// The trials each of `shapes` representative shapes gets from a budget of `trials`: an even
// split, the first ones one more where it does not divide, at least 1 each.
std::vector<std::size_t> split_trials(std::size_t trials, std::size_t shapes);

}  // namespace optune::tuner
