// How far another device's records agree with the task's own: Kendall's tau over shared configs.
#include "optune/tuner/search/source_agreement.hpp"

#include <gtest/gtest.h>

namespace optune::tuner {
namespace {

search_space::Config config_of(std::uint32_t option) {
  search_space::Config config;
  config.options = {option, 0};
  return config;
}

struct Records {
  std::vector<search_space::Config> configs;
  std::vector<double> gflops;
};

// Six configs of the task, each faster than the one before.
Records own_records() {
  Records own;
  for (std::uint32_t i = 0; i < 6; ++i) {
    own.configs.push_back(config_of(i));
    own.gflops.push_back(10.0 * (i + 1));
  }
  return own;
}

TEST(SourceAgreement, SameOrderIsOneReversedOrderIsMinusOne) {
  const auto own = own_records();
  Throughputs same, reversed;
  for (std::uint32_t i = 0; i < 6; ++i) {
    same[config_of(i)] = 0.5 * (i + 1);   // another scale, the same order
    reversed[config_of(i)] = 6.0 - i;
  }
  EXPECT_DOUBLE_EQ(*rank_agreement(same, own.configs, own.gflops), 1.0);
  EXPECT_DOUBLE_EQ(*rank_agreement(reversed, own.configs, own.gflops), -1.0);
}

TEST(SourceAgreement, CountsOnlyConfigsBothMeasuredAndNeedsEnoughOfThem) {
  const auto own = own_records();
  Throughputs source;
  for (std::uint32_t i = 0; i < 4; ++i) source[config_of(i)] = 1.0 + i;
  source[config_of(100)] = 1000;  // not measured by the task: no say
  EXPECT_FALSE(rank_agreement(source, own.configs, own.gflops).has_value()) << "4 shared configs";
  source[config_of(4)] = 0.5;  // the task's second fastest is the source's slowest
  const auto tau = rank_agreement(source, own.configs, own.gflops);
  ASSERT_TRUE(tau.has_value());
  EXPECT_DOUBLE_EQ(*tau, (6.0 - 4.0) / 10.0);  // of 10 pairs, the 4 with config 4 are discordant
}

TEST(SourceAgreement, FailedConfigsRankSlowest) {
  auto own = own_records();
  own.gflops[5] = 0;  // the fastest failed on this device
  Throughputs source;
  for (std::uint32_t i = 0; i < 6; ++i) source[config_of(i)] = i == 5 ? 0 : 1.0 + i;  // and there
  EXPECT_DOUBLE_EQ(*rank_agreement(source, own.configs, own.gflops), 1.0);
}

}  // namespace
}  // namespace optune::tuner
