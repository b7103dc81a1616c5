// How much of a config's one-knob neighbourhood is measured (xgb's saturation weight reads it).
#include "optune/tuner/search/measured_neighbours.hpp"

#include <gtest/gtest.h>

namespace optune::tuner {
namespace {

search_space::Config config_of(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  search_space::Config config;
  config.options = {a, b, c};
  return config;
}

TEST(MeasuredNeighbours, ShareCountsMeasuredConfigsOneKnobAwayOverTheNeighboursTheKnobsAllow) {
  search_space::ConfigSpace space;  // 4 x 3 x 2 options: 3 + 2 + 1 = 6 neighbours each
  space.add(search_space::IntRangeKnob{"a", 0, 3, 1});
  space.add(search_space::IntRangeKnob{"b", 0, 2, 1});
  space.add(search_space::IntRangeKnob{"c", 0, 1, 1});
  MeasuredNeighbours measured(space);
  EXPECT_DOUBLE_EQ(measured.share(config_of(0, 0, 0)), 0.0);
  measured.add(config_of(1, 0, 0));  // a neighbour of (0, 0, 0) in a
  measured.add(config_of(3, 0, 0));  // another, in a
  measured.add(config_of(0, 2, 0));  // in b
  measured.add(config_of(1, 1, 0));  // two knobs away: not a neighbour
  measured.add(config_of(0, 0, 1));  // in c
  EXPECT_DOUBLE_EQ(measured.share(config_of(0, 0, 0)), 4.0 / 6.0);
  // (2, 1, 1): (2, 1, 0) is not measured; none of the five is one knob away.
  EXPECT_DOUBLE_EQ(measured.share(config_of(2, 1, 1)), 0.0);
  // (1, 2, 0): (1, 0, 0) and (1, 1, 0) in b, (0, 2, 0) in a.
  EXPECT_DOUBLE_EQ(measured.share(config_of(1, 2, 0)), 3.0 / 6.0);
}

}  // namespace
}  // namespace optune::tuner
