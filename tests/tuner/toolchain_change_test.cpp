// toolchain_change: what regress and apply-best say when a tuned record was built by another compiler
// or flags, and whether revalidate measures it again.
#include "optune/tuner/results/toolchain_change.hpp"

#include <gtest/gtest.h>

namespace optune::tuner {
namespace {

db::TuningRecord built_by(const std::string& compiler, const std::string& flags) {
  db::TuningRecord record;
  record.toolchain = {{"compiler", compiler}, {"flags", flags}};
  return record;
}

TEST(ToolchainChange, SaysWhatChangedAndNothingWhenUnchangedOrUnknown) {
  const measure::Toolchain today{"c++ (Debian 12.2.0-14) 12.2.0", "-O3 -march=native"};
  EXPECT_EQ(toolchain_change(built_by(today.compiler, today.flags), today), "");
  EXPECT_EQ(toolchain_change(db::TuningRecord{}, today), "");  // schema 5 or older: unknown
  EXPECT_EQ(toolchain_change(built_by("clang version 14.0.6", today.flags), today),
            "compiler clang version 14.0.6, now c++ (Debian 12.2.0-14) 12.2.0");
  EXPECT_EQ(toolchain_change(built_by(today.compiler, "-O2"), today), "flags -O2, now -O3 -march=native");
  EXPECT_EQ(toolchain_change(built_by("NVRTC 12.8", ""), {"NVRTC 13.0", ""}), "compiler NVRTC 12.8, now NVRTC 13.0");
  EXPECT_EQ(toolchain_change(built_by("c++", "-O3"), {"", ""}), "");  // a builder that cannot tell
  // Another optune built it: its own code generation may differ (no version recorded: not compared).
  db::TuningRecord older = built_by(today.compiler, today.flags);
  older.optune_version = "0.0.9-older";
  EXPECT_EQ(toolchain_change(older, today).rfind("optune 0.0.9-older, now ", 0), 0u) << toolchain_change(older, today);
  EXPECT_EQ(match_toolchain(older, today), ToolchainMatch::kChanged);
}

// revalidate re-measures what is not the same: another toolchain, or one that nobody recorded.
TEST(ToolchainChange, MatchTellsSameChangedAndUnknownApart) {
  const measure::Toolchain today{"c++ (Debian 12.2.0-14) 12.2.0", "-O3"};
  EXPECT_EQ(match_toolchain(built_by(today.compiler, today.flags), today), ToolchainMatch::kSame);
  EXPECT_EQ(match_toolchain(built_by(today.compiler, "-O2"), today), ToolchainMatch::kChanged);
  EXPECT_EQ(match_toolchain(db::TuningRecord{}, today), ToolchainMatch::kUnknown);
  EXPECT_EQ(match_toolchain(built_by(today.compiler, today.flags), {"", ""}), ToolchainMatch::kUnknown);
  EXPECT_EQ(toolchain_difference(built_by(today.compiler, today.flags), today), "");
  EXPECT_EQ(toolchain_difference(db::TuningRecord{}, today),
            "toolchain unknown (recorded before schema 6), now c++ (Debian 12.2.0-14) 12.2.0");
  EXPECT_EQ(toolchain_difference(built_by(today.compiler, "-O2"), today), "flags -O2, now -O3");
  EXPECT_EQ(toolchain_json(today), (nlohmann::json{{"compiler", today.compiler}, {"flags", "-O3"}}));
  EXPECT_TRUE(toolchain_json({"", ""}).is_null());
}

}  // namespace
}  // namespace optune::tuner
