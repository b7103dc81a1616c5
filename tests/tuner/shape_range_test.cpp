// Shape ranges: the representative shapes a range is tuned at, how the trials are split among
// them, and the ranges refused; and a stored config read in the space of another shape, as the
// nearest config of an untuned shape is.
#include "optune/tuner/scheduling/shape_range.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "optune/backends/registry.hpp"
#include "optune/tuner/results/nearest_config.hpp"

namespace optune::tuner {
namespace {

using Points = std::vector<std::int64_t>;

TEST(ShapeRangeTest, PointsAreLogSpacedWithBothEnds) {
  EXPECT_EQ(range_points(1, 512, 8), (Points{1, 2, 6, 14, 35, 86, 210, 512}));
  EXPECT_EQ(range_points(1, 512, 6), (Points{1, 3, 12, 42, 147, 512}));
  EXPECT_EQ(range_points(32, 512, 8), (Points{32, 64, 128, 256, 512}));  // one point per 1.25 octaves
}

TEST(ShapeRangeTest, NarrowRangeIsItsEnds) {
  EXPECT_EQ(range_points(500, 512, 6), (Points{500, 512}));
  EXPECT_EQ(range_points(7, 7, 6), (Points{7}));
  EXPECT_EQ(range_points(1, 2, 6), (Points{1, 2}));
}

TEST(ShapeRangeTest, SeveralRangesTakeFewerPointsEach) {
  const auto shapes = representative_shapes("M=1..512,N=256..1024,K=768");
  ASSERT_EQ(shapes.size(), 9u);  // 3 x 3
  EXPECT_EQ(shapes.front(), "M=1,N=256,K=768");
  EXPECT_EQ(shapes[1], "M=1,N=512,K=768");
  EXPECT_EQ(shapes.back(), "M=512,N=1024,K=768");
}

// The budget bounds the shapes: each needs a trial, and never more than nine, however many extents
// are ranged (a conv2d range over 9 extents planned 256 shapes for 4 trials).
TEST(ShapeRangeTest, ShapesNeverOutnumberTheTrialsNorNine) {
  EXPECT_EQ(representative_shapes("M=1..512,N=768,K=768", 2),
            (std::vector<std::string>{"M=1,N=768,K=768", "M=512,N=768,K=768"}));
  EXPECT_EQ(representative_shapes("M=1..512,N=768,K=768", 1), (std::vector<std::string>{"M=23,N=768,K=768"}));
  EXPECT_EQ(representative_shapes("M=1..512,N=768,K=768", 100).size(), 8u);
  const std::string conv = "N=1..8,C=3..512,H=7..224,W=7..224,K=8..512,R=1..7,S=1..7,stride=1..2,dilation=1..2";
  EXPECT_LE(representative_shapes(conv).size(), kMostShapes);
  EXPECT_EQ(representative_shapes(conv, 4).size(), 4u);
  // The widest ranges keep their ends; the narrowest give theirs up first, keeping their middle.
  EXPECT_EQ(representative_shapes("M=1..512,N=500..512,K=1..4", 2),
            (std::vector<std::string>{"M=1,N=506,K=2", "M=512,N=506,K=2"}));
}

TEST(ShapeRangeTest, PositionalRangeAndFixedExtentsAreKept) {
  EXPECT_EQ(representative_shapes("1..4,8,3"), (std::vector<std::string>{"1,8,3", "2,8,3", "4,8,3"}));
  EXPECT_EQ(representative_shapes("M=8,N=8,K=8"), (std::vector<std::string>{"M=8,N=8,K=8"}));
  EXPECT_TRUE(is_shape_range("M=1..2,N=3,K=4"));
  EXPECT_FALSE(is_shape_range("M=1,N=3,K=4"));
}

TEST(ShapeRangeTest, RejectsEmptyRangeNamingIt) {
  try {
    representative_shapes("M=512..1,N=768,K=768");
    FAIL() << "an empty range was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "shape range 'M=512..1' is empty: 512 > 1");
  }
}

TEST(ShapeRangeTest, RejectsMalformedRanges) {
  for (const char* shape : {"M=1..,N=8,K=8", "M=..4,N=8,K=8", "M=a..4,N=8,K=8", "M=1...4,N=8,K=8",
                            "M=1..4..8,N=8,K=8", "M=-1..4,N=8,K=8", "M=0..4,N=8,K=8", "M=1..99999999,N=8,K=8"}) {
    EXPECT_THROW(representative_shapes(shape), std::invalid_argument) << shape;
  }
}

TEST(ShapeRangeTest, HeldOutShapesAreInTheRangeButNotSampledAndDrawnAlike) {
  const std::string range = "M=1..2048,N=96,K=80";
  const auto sampled = dispatch_shapes(range, 16);
  const auto held_out = held_out_shapes(range, 6, sampled);
  ASSERT_EQ(held_out.size(), 6u);
  for (const auto& shape : held_out) {
    EXPECT_EQ(std::find(sampled.begin(), sampled.end(), shape), sampled.end()) << shape;
    const auto workload = kernels::parse_workload(kernels::Op::kGemm, shape);
    EXPECT_GE(workload.gemm().M, 1);
    EXPECT_LE(workload.gemm().M, 2048);
    EXPECT_EQ(workload.gemm().N, 96);
    EXPECT_EQ(workload.gemm().K, 80);
  }
  EXPECT_EQ(held_out_shapes(range, 6, sampled), held_out);
  // A range of two values, both sampled, holds no other shape.
  EXPECT_TRUE(held_out_shapes("M=4..5,N=8,K=8", 3, {"M=4,N=8,K=8", "M=5,N=8,K=8"}).empty());
}

TEST(ShapeRangeTest, DispatchSamplesAboutTwoPointsPerOctaveUpToItsBound) {
  // 1..2048 is 11 octaves: 23 points wanted, 16 allowed; both ends, log-spaced.
  const auto shapes = dispatch_shapes("M=1..2048,N=96,K=80", 16);
  ASSERT_EQ(shapes.size(), 16u);
  EXPECT_EQ(shapes.front(), "M=1,N=96,K=80");
  EXPECT_EQ(shapes.back(), "M=2048,N=96,K=80");
  // 4 octaves: 9 points at every half octave, of which 1.41 rounds to 1 again.
  EXPECT_EQ(dispatch_shapes("M=1..16,N=96,K=80", 16).size(), 8u);
  // Two ranged extents share the bound: 4 x 4.
  EXPECT_EQ(dispatch_shapes("M=1..1024,N=1..1024,K=64", 16).size(), 16u);
  EXPECT_EQ(dispatch_shapes("M=1..1024,N=1..1024,K=64", 16)[1], "M=1,N=10,K=64");
}

TEST(ShapeRangeTest, TrialsAreSplitEvenlyWithAtLeastOneEach) {
  EXPECT_EQ(split_trials(10, 4), (std::vector<std::size_t>{3, 3, 2, 2}));
  EXPECT_EQ(split_trials(2, 4), (std::vector<std::size_t>{1, 1, 1, 1}));
  EXPECT_EQ(split_trials(60, 6), (std::vector<std::size_t>{10, 10, 10, 10, 10, 10}));
}

// A GEMM config tuned for M=32 read for M=24: the blocks are kept, their counts follow M.
TEST(ConfigForShapeTest, SplitBlocksAreKeptAndTheirCountFollowsTheExtent) {
  const auto& kernel = backends::find_template("gemm.cpu");
  const auto device = backends::find_device(backends::parse_target("cpu"));
  const auto tuned = kernels::parse_workload(kernels::Op::kGemm, "32,64,64");
  const auto untuned = kernels::parse_workload(kernels::Op::kGemm, "24,64,64");
  auto tuned_space = kernel.space(tuned, device);
  const auto config = tuned_space.to_json(kernel.default_config(tuned, device, tuned_space));
  auto untuned_space = kernel.space(untuned, device);
  const auto read = config_for_shape(untuned_space, config);
  ASSERT_TRUE(read.has_value()) << config.dump();
  const auto json = untuned_space.to_json(*read);
  EXPECT_EQ(json["tile_mc"][1], config["tile_mc"][1]);
  EXPECT_EQ(json["tile_mc"][0], (24 + config["tile_mc"][1].get<std::int64_t>() - 1) / config["tile_mc"][1].get<std::int64_t>());
  for (const char* knob : {"mr", "nr", "lanes", "loop_order", "threads"}) EXPECT_EQ(json[knob], config[knob]) << knob;
}

// A block far beyond a small extent breaks the template's constraint there: no config.
TEST(ConfigForShapeTest, ConfigInvalidForTheShapeIsRefused) {
  const auto& kernel = backends::find_template("gemm.cpu");
  const auto device = backends::find_device(backends::parse_target("cpu"));
  const auto large = kernels::parse_workload(kernels::Op::kGemm, "1024,64,64");
  auto large_space = kernel.space(large, device);
  auto config = large_space.to_json(kernel.default_config(large, device, large_space));
  config["tile_mc"] = nlohmann::json::array({1, 1024});  // valid at M=1024 with mr 4, far beyond M=4
  config["mr"] = 4;
  const auto small = kernels::parse_workload(kernels::Op::kGemm, "4,64,64");
  EXPECT_FALSE(config_for_shape(kernel.space(small, device), config).has_value());
  EXPECT_FALSE(config_for_shape(kernel.space(small, device), nlohmann::json("not a config")).has_value());
}

}  // namespace
}  // namespace optune::tuner
