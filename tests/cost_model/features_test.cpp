#include "optune/backends/registry.hpp"
#include "optune/cost_model/features.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "synthetic_task.hpp"

namespace optune::cost_model {
namespace {

using testing::gemm_workload;
using testing::synthetic_space;

std::size_t column(const FeatureExtractor& features, const std::string& name) {
  const auto& names = features.names();
  const auto found = std::find(names.begin(), names.end(), name);
  EXPECT_NE(found, names.end()) << name;
  return static_cast<std::size_t>(found - names.begin());
}

TEST(FeatureExtractor, NamesAreTheSameForTwoShapesOfOneKnobSet) {
  const FeatureExtractor small(synthetic_space(256, 128), gemm_workload(256, 128), {});
  const FeatureExtractor large(synthetic_space(1024, 64), gemm_workload(1024, 64), {});
  EXPECT_EQ(small.names(), large.names());
  // splits 2+2, choice 4, bool 1, int 2, permutation 3, shape 3, dtype 2
  EXPECT_EQ(small.size(), 19u);
  EXPECT_EQ(small.extract(small.space().from_index(0)).size(), small.size());
  const FeatureExtractor knobs_only(synthetic_space());
  EXPECT_EQ(knobs_only.size(), 14u);
}

TEST(FeatureExtractor, EncodesKnobsByValue) {
  const FeatureExtractor features(synthetic_space(256, 128), gemm_workload(256, 128, 64), {});
  const auto config = features.space().from_json({{"tile_m", {16, 16}},
                                                  {"tile_n", {32, 4}},
                                                  {"layout", "blocked"},
                                                  {"unroll", true},
                                                  {"vector", 8},
                                                  {"order", {"k", "i", "j"}}});
  const std::vector<float> x = features.extract(config);
  EXPECT_FLOAT_EQ(x[column(features, "tile_m.f0")], 4.0f);
  EXPECT_FLOAT_EQ(x[column(features, "tile_m.f1")], 4.0f);
  EXPECT_FLOAT_EQ(x[column(features, "tile_n.f0")], 5.0f);
  EXPECT_FLOAT_EQ(x[column(features, "tile_n.f1")], 2.0f);
  EXPECT_FLOAT_EQ(x[column(features, "layout=row")], 0.0f);
  EXPECT_FLOAT_EQ(x[column(features, "layout=blocked")], 1.0f);
  EXPECT_FLOAT_EQ(x[column(features, "unroll")], 1.0f);
  EXPECT_FLOAT_EQ(x[column(features, "vector")], 8.0f);
  EXPECT_FLOAT_EQ(x[column(features, "vector.log2")], 3.0f);
  EXPECT_FLOAT_EQ(x[column(features, "order.pos.k")], 0.0f);
  EXPECT_FLOAT_EQ(x[column(features, "order.pos.i")], 1.0f);
  EXPECT_FLOAT_EQ(x[column(features, "order.pos.j")], 2.0f);
  EXPECT_FLOAT_EQ(x[column(features, "shape.M")], 8.0f);
  EXPECT_FLOAT_EQ(x[column(features, "shape.K")], 6.0f);
}

TEST(FeatureExtractor, SameInnerTileMeansSameKnobFeaturesAcrossShapes) {
  const FeatureExtractor small(synthetic_space(256, 128), gemm_workload(256, 128), {});
  const FeatureExtractor large(synthetic_space(1024, 128), gemm_workload(1024, 128), {});
  const nlohmann::json small_json = {{"tile_m", {16, 16}}, {"tile_n", {16, 8}},
                                     {"layout", "row"},    {"unroll", false},
                                     {"vector", 4},        {"order", {"i", "j", "k"}}};
  nlohmann::json large_json = small_json;
  large_json["tile_m"] = {64, 16};
  const auto a = small.extract(small.space().from_json(small_json));
  const auto b = large.extract(large.space().from_json(large_json));
  EXPECT_EQ(a[column(small, "tile_m.f1")], b[column(large, "tile_m.f1")]);
  EXPECT_NE(a[column(small, "tile_m.f0")], b[column(large, "tile_m.f0")]);
  EXPECT_EQ(a[column(small, "layout=row")], b[column(large, "layout=row")]);
}

TEST(FeatureExtractor, ConvolutionShapeFeaturesIncludeZeroPad) {
  kernels::Workload conv;
  conv.op = kernels::Op::kConv2d;
  conv.shape = kernels::Conv2dShape{1, 64, 56, 56, 128, 3, 3, 1, 0, 1, 1};
  const FeatureExtractor features(synthetic_space(), conv, {});
  const auto x = features.extract(features.space().from_index(0));
  EXPECT_FLOAT_EQ(x[column(features, "shape.C")], 6.0f);
  EXPECT_FLOAT_EQ(x[column(features, "shape.K")], 7.0f);
  EXPECT_FLOAT_EQ(x[column(features, "shape.pad")], 0.0f);
  EXPECT_FLOAT_EQ(x[column(features, "dtype.log2_bytes")], 2.0f);  // f32
  EXPECT_EQ(features.size(), 14u + 11u + 2u);
}

TEST(FeatureExtractor, LongPermutationIsEncodedWithoutATable) {
  search_space::ConfigSpace space;
  space.add(
      search_space::PermutationKnob{"order", {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}});
  const FeatureExtractor features(space);
  ASSERT_EQ(features.size(), 10u);
  std::mt19937_64 rng(1);
  const auto config = space.sample_valid(rng);
  const auto x = features.extract(config);
  const auto order = space.option_json(0, config.options[0]);
  for (std::size_t position = 0; position < order.size(); ++position) {
    const std::string item = order[position];
    EXPECT_FLOAT_EQ(x[column(features, "order.pos." + item)], static_cast<float>(position));
  }
}

// A template whose only purpose is its derived features.
class DerivedFeatureTemplate : public kernels::KernelTemplate {
 public:
  std::string name() const override { return "test.derived"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::string_view backend() const override { return "cpu"; }
  search_space::ConfigSpace space(const kernels::Workload& workload,
                                  const kernels::DeviceInfo&) const override {
    return synthetic_space(workload.gemm().M, workload.gemm().N);
  }
  search_space::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                                      const search_space::ConfigSpace& space) const override {
    return space.from_index(0);
  }
  std::string emit_source(const kernels::Workload&, const kernels::DeviceInfo&,
                          const search_space::ConfigView&) const override {
    return "";
  }
  std::vector<std::pair<std::string, double>> derived_features(
      const kernels::Workload& workload, const kernels::DeviceInfo& device,
      const search_space::ConfigView& view) const override {
    const double area =
        static_cast<double>(view.split_factor("tile_m", 1) * view.split_factor("tile_n", 1));
    return {{"tile_area", area},
            {"tiles", static_cast<double>(workload.gemm().M * workload.gemm().N) / area},
            {"fits_l1", area * 4 <= static_cast<double>(device.l1d_bytes) ? 1.0 : 0.0}};
  }
};

TEST(FeatureExtractor, AppendsTemplateDerivedFeatures) {
  const DerivedFeatureTemplate kernel_template;
  const auto workload = gemm_workload(256, 128);
  const FeatureExtractor features(kernel_template.space(workload, {}), workload, {},
                                  &kernel_template);
  EXPECT_EQ(features.size(), 19u + 3u);
  EXPECT_EQ(features.names().back(), "derived.fits_l1");
  const auto config = features.space().from_json({{"tile_m", {16, 16}},
                                                  {"tile_n", {16, 8}},
                                                  {"layout", "row"},
                                                  {"unroll", false},
                                                  {"vector", 4},
                                                  {"order", {"i", "j", "k"}}});
  const auto x = features.extract(config);
  EXPECT_FLOAT_EQ(x[column(features, "derived.tile_area")], 128.0f);
  EXPECT_FLOAT_EQ(x[column(features, "derived.tiles")], 256.0f);
}

TEST(FeatureExtractor, BatchRowsEqualSingleExtraction) {
  const FeatureExtractor features(synthetic_space(), gemm_workload(256, 128), {});
  std::mt19937_64 rng(3);
  const auto configs = features.space().sample_valid_distinct(rng, 20);
  const FeatureMatrix matrix = features.extract_batch(configs);
  ASSERT_EQ(matrix.rows, 20u);
  ASSERT_EQ(matrix.cols, features.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const auto single = features.extract(configs[i]);
    EXPECT_TRUE(std::equal(single.begin(), single.end(), matrix.row(i).begin())) << i;
  }
}

TEST(FeatureExtractor, RejectsConfigOfAnotherSpace) {
  const FeatureExtractor features(synthetic_space());
  EXPECT_THROW(features.extract(search_space::Config{{0, 0}}), std::invalid_argument);
  search_space::Config out_of_range = features.space().from_index(0);
  out_of_range.options[2] = 99;
  EXPECT_THROW(features.extract(out_of_range), std::invalid_argument);
}

}  // namespace
}  // namespace optune::cost_model

namespace optune::cost_model {
namespace {

TEST(FeatureExtractor, ValuesKnobIsLog2WhenEveryValueIsAPowerOfTwo) {
  search_space::ConfigSpace space;
  space.add(search_space::ValuesKnob{"block", {16, 32, 64}});
  space.add(search_space::ValuesKnob{"tile", {1, 3, 4}});
  FeatureExtractor features(space);
  EXPECT_EQ(features.names(), (std::vector<std::string>{"block.log2", "tile"}));
  const auto row = features.extract(search_space::Config{{2, 1}});
  EXPECT_FLOAT_EQ(row[0], 6.0f);
  EXPECT_FLOAT_EQ(row[1], 3.0f);
}

}  // namespace
}  // namespace optune::cost_model
