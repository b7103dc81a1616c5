// How counts and speed-ups read in every front end (tuner/results/output_text.hpp).
#include "optune/tuner/results/output_text.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace optune::tuner {
namespace {

TEST(OutputTextTest, CountsTakeTheSingularForOneOnly) {
  EXPECT_EQ(counted(0, "record"), "0 records");
  EXPECT_EQ(counted(1, "record"), "1 record");
  EXPECT_EQ(counted(2, "new record"), "2 new records");
  EXPECT_EQ(counted(1, "dispatch leaf", "dispatch leaves"), "1 dispatch leaf");
  EXPECT_EQ(counted(3, "dispatch leaf", "dispatch leaves"), "3 dispatch leaves");
}

TEST(OutputTextTest, SpeedupIsTheReferenceTimeOverTheTimeAsTimesFaster) {
  EXPECT_EQ(speedup_text(1.2345), "1.23x");
  EXPECT_EQ(speedup_text(2.0e-3, 1.0e-3), "2.00x");
  EXPECT_EQ(speedup_text(1.0, 1.2), "0.83x") << "slower than the reference: under 1";
  EXPECT_EQ(speedup_text(0.0, 1.0), "-");
  EXPECT_EQ(speedup_text(1.0, 0.0), "-");
  EXPECT_EQ(speedup_text(std::nan("")), "-");
  EXPECT_EQ(speedup_interval_text(3.92, 3.851, 4.01), "3.92x (3.85x to 4.01x)");
}

}  // namespace
}  // namespace optune::tuner
