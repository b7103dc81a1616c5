// How far another device's records agree with the task's own: Kendall's tau over the task's
// configs, with the device's estimate of configs it never measured.
#include "optune/tuner/search/source_agreement.hpp"

#include <gtest/gtest.h>

namespace optune::tuner {
namespace {

search_space::Config config_of(std::uint32_t a, std::uint32_t b = 0) {
  search_space::Config config;
  config.options = {a, b};
  return config;
}

TEST(SourceAgreement, SameOrderIsOneReversedOrderIsMinusOne) {
  const std::vector<double> own = {10, 20, 30, 40, 50, 60};
  EXPECT_DOUBLE_EQ(*rank_agreement(own, std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3}), 1.0);  // another scale
  EXPECT_DOUBLE_EQ(*rank_agreement(own, std::vector<double>{6, 5, 4, 3, 2, 1}), -1.0);
}

TEST(SourceAgreement, NeedsEnoughConfigsAndCountsOnlyUntiedPairs) {
  EXPECT_FALSE(rank_agreement(std::vector<double>{1, 2, 3, 4}, std::vector<double>{1, 2, 3, 4}).has_value());
  // Of the 10 pairs, the 3 of the second fastest config (the source's slowest) with slower ones
  // are discordant.
  const auto tau = rank_agreement(std::vector<double>{10, 20, 30, 40, 50}, std::vector<double>{1, 2, 3, 0.5, 5});
  ASSERT_TRUE(tau.has_value());
  EXPECT_DOUBLE_EQ(*tau, (7.0 - 3.0) / 10.0);
  // A failure on both devices (0) ties with nothing else here, so it ranks slowest on both.
  EXPECT_DOUBLE_EQ(*rank_agreement(std::vector<double>{0, 20, 30, 40, 50}, std::vector<double>{0, 2, 3, 4, 5}), 1.0);
}

TEST(SourceAgreement, DeviceEstimatesAnUnmeasuredConfigFromItsNearestRecords) {
  SourceDevice device({config_of(0, 0), config_of(0, 5), config_of(3, 5), config_of(7, 7)}, {10, 20, 40, 80});
  EXPECT_DOUBLE_EQ(device.estimate(config_of(3, 5)), 40);  // measured
  EXPECT_DOUBLE_EQ(device.estimate(config_of(7, 1)), 80);  // one knob from (7, 7) alone
  EXPECT_DOUBLE_EQ(device.estimate(config_of(9, 5)), 30);  // one knob from (0, 5) and (3, 5): their mean
}

}  // namespace
}  // namespace optune::tuner
