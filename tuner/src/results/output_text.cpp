#include "optune/tuner/results/output_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace optune::tuner {

std::string counted(std::size_t count, std::string_view noun, std::string_view plural) {
  if (count == 1) return fmt::format("1 {}", noun);
  if (plural.empty()) return fmt::format("{} {}s", count, noun);
  return fmt::format("{} {}", count, plural);
}

std::string speedup_text(double speedup) {
  if (!std::isfinite(speedup) || speedup <= 0) return "-";
  return fmt::format("{:.2f}x", speedup);
}

std::string speedup_text(double reference_seconds, double seconds) {
  if (!(seconds > 0) || !(reference_seconds > 0)) return "-";
  return speedup_text(reference_seconds / seconds);
}

std::string speedup_interval_text(double speedup, double low, double high) {
  return fmt::format("{} ({} to {})", speedup_text(speedup), speedup_text(low), speedup_text(high));
}

}  // namespace optune::tuner
