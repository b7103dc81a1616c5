#include "optune/tuner/scheduling/shape_range.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>

#include "optune/kernels/workload.hpp"

namespace optune::tuner {
namespace {

constexpr std::string_view kRangeMark = "..";

// The most points per ranged extent, by how many extents are ranged (see the header).
std::size_t points_per_extent(std::size_t ranged_extents) {
  if (ranged_extents <= 1) return 8;
  if (ranged_extents == 2) return 3;
  return 2;
}

std::vector<std::string> split_parts(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.emplace_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

// A whole number of decimal digits within the largest extent; nullopt otherwise.
std::optional<std::int64_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(text);
}

// One part of the shape, "M=1..512" or "1..512": its name (with "=", or "") and its bounds.
struct RangePart {
  std::string name;
  std::int64_t low = 0, high = 0;
};
RangePart parse_range_part(const std::string& part) {
  const std::size_t equals = part.find('=');
  const std::string name = equals == std::string::npos ? "" : part.substr(0, equals + 1);
  const std::string bounds = trimmed(equals == std::string::npos ? part : part.substr(equals + 1));
  const std::size_t mark = bounds.find(kRangeMark);
  auto low = whole_number(trimmed(bounds.substr(0, mark)));
  auto high = whole_number(trimmed(bounds.substr(mark + kRangeMark.size())));
  if (!low || !high)
    throw std::invalid_argument("shape range '" + trimmed(part) + "' is malformed: expected LOW..HIGH, two whole numbers "
                                "(e.g. M=1..512)");
  if (*low > *high)
    throw std::invalid_argument("shape range '" + trimmed(part) + "' is empty: " + std::to_string(*low) + " > " +
                                std::to_string(*high));
  if (*low < 1)
    throw std::invalid_argument("shape range '" + trimmed(part) + "' starts below 1: extents are positive");
  if (*high > kernels::kMaxExtent)
    throw std::invalid_argument("shape range '" + trimmed(part) + "' ends past the largest extent, " +
                                std::to_string(kernels::kMaxExtent));
  return {trimmed(name), *low, *high};
}

double octaves(const RangePart& range) {
  return std::log2(static_cast<double>(range.high) / static_cast<double>(range.low));
}

// How many points range_points spaces out (before rounding makes neighbours equal, as 1.41 and 1).
std::size_t point_count(std::int64_t low, std::int64_t high, std::size_t most, double octaves_per_point) {
  const double octaves = std::log2(static_cast<double>(high) / static_cast<double>(low));
  const std::size_t wanted = std::max<std::size_t>(1 + static_cast<std::size_t>(std::ceil(octaves / octaves_per_point)),
                                                   high > low ? 2 : 1);
  return std::clamp<std::size_t>(wanted, 1, most);
}

// How many points each range gets: as many as it wants up to points_per_extent, then, while their
// product exceeds `most_shapes`, one fewer for the range whose points lie closest together (in
// octaves), where a point less loses the least cover.
std::vector<std::size_t> point_counts(const std::vector<RangePart>& ranges, std::size_t most_shapes,
                                      std::size_t most_per_extent, double octaves_per_point) {
  std::vector<std::size_t> counts;
  double shapes = 1;  // a double: two points each of many ranges would overflow a count
  for (const auto& range : ranges) {
    counts.push_back(point_count(range.low, range.high, most_per_extent, octaves_per_point));
    shapes *= static_cast<double>(counts.back());
  }
  while (shapes > static_cast<double>(most_shapes)) {
    std::size_t densest = 0;
    double closest = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      if (counts[i] < 2) continue;
      const double gap = octaves(ranges[i]) / static_cast<double>(counts[i] - 1);
      if (gap < closest) closest = gap, densest = i;
    }
    shapes = shapes / static_cast<double>(counts[densest]) * static_cast<double>(counts[densest] - 1);
    --counts[densest];
  }
  return counts;
}

}  // namespace

bool is_shape_range(std::string_view shape_text) { return shape_text.find(kRangeMark) != std::string_view::npos; }

std::vector<std::int64_t> range_points(std::int64_t low, std::int64_t high, std::size_t most, double octaves_per_point) {
  const double octaves = std::log2(static_cast<double>(high) / static_cast<double>(low));
  const std::size_t count = point_count(low, high, most, octaves_per_point);
  std::vector<std::int64_t> points;
  for (std::size_t i = 0; i < count; ++i) {
    // One point alone is the range's middle in log2: the nearest to all of it.
    const double at = count == 1 ? 0.5 : static_cast<double>(i) / static_cast<double>(count - 1);
    const auto point = static_cast<std::int64_t>(std::llround(static_cast<double>(low) * std::pow(2.0, octaves * at)));
    points.push_back(std::clamp(point, low, high));
  }
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

namespace {

// The shapes of a range: each ranged extent's points log-spaced about one per `octaves_per_point`,
// at most `most_per_extent` each and `most_shapes` in all, in the cartesian product of the parts.
std::vector<std::string> range_shapes(std::string_view shape_text, std::size_t most_shapes,
                                      std::size_t most_per_extent, double octaves_per_point) {
  const auto parts = split_parts(shape_text);
  std::vector<RangePart> ranges;
  for (const auto& part : parts)
    if (is_shape_range(part)) ranges.push_back(parse_range_part(part));
  const std::vector<std::size_t> counts = point_counts(ranges, most_shapes, most_per_extent, octaves_per_point);
  // The cartesian product of every part's values, built part by part.
  std::vector<std::string> shapes = {""};
  std::size_t range_index = 0;
  for (const auto& part : parts) {
    std::vector<std::string> values = {trimmed(part)};
    if (is_shape_range(part)) {
      const RangePart& range = ranges[range_index];
      values.clear();
      for (auto point : range_points(range.low, range.high, counts[range_index++], octaves_per_point))
        values.push_back(range.name + std::to_string(point));
    }
    std::vector<std::string> extended;
    for (const auto& shape : shapes)
      for (const auto& value : values) extended.push_back(shape.empty() ? value : shape + "," + value);
    shapes = std::move(extended);
  }
  return shapes;
}

std::size_t ranged_extents(std::string_view shape_text) {
  const auto parts = split_parts(shape_text);
  return static_cast<std::size_t>(std::count_if(parts.begin(), parts.end(), [](const auto& p) { return is_shape_range(p); }));
}

}  // namespace

std::vector<std::string> representative_shapes(std::string_view shape_text, std::size_t most_shapes) {
  return range_shapes(shape_text, std::clamp<std::size_t>(most_shapes, 1, kMostShapes),
                      points_per_extent(ranged_extents(shape_text)), kOctavesPerPoint);
}

std::vector<std::string> dispatch_shapes(std::string_view shape_text, std::size_t most_shapes) {
  const std::size_t ranged = std::max<std::size_t>(1, ranged_extents(shape_text));
  const auto per_extent = static_cast<std::size_t>(
      std::floor(std::pow(static_cast<double>(std::max<std::size_t>(most_shapes, 2)), 1.0 / static_cast<double>(ranged)) + 1e-9));
  return range_shapes(shape_text, std::max<std::size_t>(most_shapes, 1), std::max<std::size_t>(per_extent, 2),
                      kDispatchOctavesPerPoint);
}

std::vector<std::string> held_out_shapes(std::string_view shape_text, std::size_t count,
                                         const std::vector<std::string>& sampled) {
  const auto parts = split_parts(shape_text);
  std::vector<std::string> shapes;
  // Seeded by the range: the same range is validated on the same shapes in every run.
  std::mt19937_64 random(std::hash<std::string_view>{}(shape_text));
  for (std::size_t attempt = 0; shapes.size() < count && attempt < 64 * count; ++attempt) {
    std::string shape;
    for (const auto& part : parts) {
      std::string value = trimmed(part);
      if (is_shape_range(part)) {
        const RangePart range = parse_range_part(part);
        std::uniform_real_distribution<double> at(0.0, 1.0);
        const auto point = static_cast<std::int64_t>(std::llround(
            static_cast<double>(range.low) * std::pow(2.0, octaves(range) * at(random))));
        value = range.name + std::to_string(std::clamp(point, range.low, range.high));
      }
      shape += (shape.empty() ? "" : ",") + value;
    }
    if (std::find(sampled.begin(), sampled.end(), shape) == sampled.end() &&
        std::find(shapes.begin(), shapes.end(), shape) == shapes.end())
      shapes.push_back(shape);
  }
  return shapes;
}

std::vector<std::size_t> split_trials(std::size_t trials, std::size_t shapes) {
  std::vector<std::size_t> split(shapes, std::max<std::size_t>(1, trials / std::max<std::size_t>(shapes, 1)));
  if (trials > shapes)
    for (std::size_t i = 0; i < trials % shapes; ++i) ++split[i];
  return split;
}

}  // namespace optune::tuner
