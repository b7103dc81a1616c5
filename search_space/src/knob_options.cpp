// Option arithmetic of single knobs: split enumeration, integer ranges, permutations.
#include "knob_options.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <stdexcept>
#include <type_traits>

namespace optune::search_space::detail {
namespace {

[[noreturn]] void reject(const std::string& knob, const std::string& why) {
  throw std::invalid_argument("knob '" + knob + "': " + why);
}

std::int64_t next_power_of_two(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The values one inner factor may take, ascending. Whether a whole tuple is allowed (divisibility,
// product bound) is decided while enumerating, since it depends on the factors before it.
std::vector<std::int64_t> inner_factor_values(const SplitKnob& knob) {
  std::vector<std::int64_t> values;
  if (knob.policy == SplitPolicy::kDivisors) {
    for (std::int64_t d = 1; d * d <= knob.extent; ++d) {
      if (knob.extent % d != 0) continue;
      values.push_back(d);
      if (d != knob.extent / d) values.push_back(knob.extent / d);
    }
  } else if (knob.policy == SplitPolicy::kPowerOfTwo) {
    for (std::int64_t p = 1; p <= next_power_of_two(knob.extent); p *= 2) values.push_back(p);
  } else {
    values = knob.candidates;
  }
  if (knob.max_factor > 0) std::erase_if(values, [&](auto v) { return v > knob.max_factor; });
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// Whether the product of the inner factors chosen so far may still be extended.
bool product_allowed(const SplitKnob& knob, std::int64_t product) {
  switch (knob.policy) {
    case SplitPolicy::kDivisors: return knob.extent % product == 0;
    case SplitPolicy::kPowerOfTwo: return product <= next_power_of_two(knob.extent);
    case SplitPolicy::kCandidates: return true;
  }
  return false;
}

struct SplitEnumeration {
  const SplitKnob& knob;
  std::vector<std::int64_t> values;
  std::vector<SplitValue> out;
  SplitValue current;

  // Fills current[position..] with inner factors; values ascend, so the output is lexicographic.
  void extend(std::size_t position, std::int64_t product) {
    if (position == current.size()) {
      current[0] = ceil_div(knob.extent, product);
      out.push_back(current);
      if (out.size() > kMaxSplitOptions) reject(knob.name, "too many split options");
      return;
    }
    for (std::int64_t v : values) {
      std::int64_t next = 0;
      if (__builtin_mul_overflow(product, v, &next)) break;
      if (!product_allowed(knob, next)) continue;
      current[position] = v;
      extend(position + 1, next);
    }
  }
};

void check_split(const SplitKnob& knob) {
  if (knob.extent < 1) reject(knob.name, "split extent must be at least 1");
  if (knob.num_outputs < 1) reject(knob.name, "split needs at least one output");
  if (knob.policy == SplitPolicy::kCandidates) {
    if (knob.candidates.empty()) reject(knob.name, "split policy kCandidates needs candidates");
    for (auto c : knob.candidates) {
      if (c < 1) reject(knob.name, "split candidates must be positive");
    }
  }
}

template <typename Items>
void check_distinct(const std::string& name, const Items& items, const char* what) {
  if (items.empty()) reject(name, std::string("needs at least one ") + what);
  if (std::set(items.begin(), items.end()).size() != items.size()) {
    reject(name, std::string("duplicate ") + what);
  }
}

}  // namespace

const std::string& knob_name(const Knob& knob) {
  return std::visit([](const auto& k) -> const std::string& { return k.name; }, knob);
}

const char* knob_kind(const Knob& knob) {
  static constexpr const char* kNames[] = {"split", "choice", "bool", "int", "permutation", "values"};
  return kNames[knob.index()];
}

void check_knob(const Knob& knob) {
  const std::string& name = knob_name(knob);
  if (name.empty()) throw std::invalid_argument("a knob needs a name");
  if (const auto* split = std::get_if<SplitKnob>(&knob)) check_split(*split);
  if (const auto* choice = std::get_if<ChoiceKnob>(&knob)) {
    check_distinct(name, choice->options, "option");
  }
  if (const auto* range = std::get_if<IntRangeKnob>(&knob)) {
    if (range->step < 1) reject(name, "int range step must be at least 1");
    if (range->hi < range->lo) reject(name, "int range is empty (hi < lo)");
    if (int_option_count(*range) > kMaxOptionsPerKnob) reject(name, "more than 2^32 options");
  }
  if (const auto* list = std::get_if<ValuesKnob>(&knob)) {
    if (list->values.empty()) reject(name, "a values knob needs at least one value");
    if (list->values.size() > kMaxOptionsPerKnob) reject(name, "more than 2^32 options");
    for (double value : list->values)
      if (!std::isfinite(value)) reject(name, "values must be finite");
    // Sorted, so that a measured landscape's 100,000 values take milliseconds, not seconds.
    std::vector<double> sorted = list->values;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) reject(name, "duplicate value");
  }
  if (const auto* permutation = std::get_if<PermutationKnob>(&knob)) {
    check_distinct(name, permutation->items, "item");
    if (permutation->items.size() > kMaxPermutationItems ||
        factorial(permutation->items.size()) > kMaxOptionsPerKnob) {
      // A Config holds option indices in 32 bits: 12! fits, 13! does not.
      reject(name, "too many permutation items (at most 12)");
    }
  }
}

nlohmann::json values_json(double value) {
  if (value == std::trunc(value) && std::fabs(value) < 9.0e15) return static_cast<std::int64_t>(value);
  return value;
}

std::vector<SplitValue> enumerate_split_options(const SplitKnob& knob) {
  check_split(knob);
  SplitEnumeration enumeration{knob, inner_factor_values(knob), {},
                               SplitValue(static_cast<std::size_t>(knob.num_outputs), 1)};
  enumeration.extend(1, 1);
  if (enumeration.out.empty()) reject(knob.name, "no split satisfies the policy and max_factor");
  return std::move(enumeration.out);
}

std::uint64_t int_option_count(const IntRangeKnob& knob) {
  // Unsigned difference: hi - lo may not fit in int64 when lo is very negative.
  auto span = static_cast<std::uint64_t>(knob.hi) - static_cast<std::uint64_t>(knob.lo);
  return span / static_cast<std::uint64_t>(knob.step) + 1;
}

std::int64_t int_value(const IntRangeKnob& knob, std::uint64_t option) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(knob.lo) +
                                   option * static_cast<std::uint64_t>(knob.step));
}

std::uint64_t factorial(std::size_t n) {
  if (n > kMaxPermutationItems) throw std::overflow_error("factorial past 20! overflows 64 bits");
  std::uint64_t f = 1;
  for (std::size_t i = 2; i <= n; ++i) f *= i;
  return f;
}

PermutationValue permutation_at(const std::vector<std::string>& items, std::uint64_t index) {
  std::vector<std::string> remaining = items;
  PermutationValue order;
  order.reserve(items.size());
  // Lehmer code: digit i (most significant first) picks among the n-i items still unused.
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::uint64_t weight = factorial(items.size() - 1 - i);
    auto digit = static_cast<std::ptrdiff_t>(index / weight);
    index %= weight;
    order.push_back(std::move(remaining[static_cast<std::size_t>(digit)]));
    remaining.erase(remaining.begin() + digit);
  }
  return order;
}

std::uint64_t permutation_index(const std::vector<std::string>& items,
                                const std::vector<std::string>& order) {
  if (order.size() != items.size()) throw std::invalid_argument("wrong number of items");
  std::vector<std::string> remaining = items;
  std::uint64_t index = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    auto found = std::find(remaining.begin(), remaining.end(), order[i]);
    if (found == remaining.end()) {
      throw std::invalid_argument("'" + order[i] + "' is not an unused item");
    }
    auto digit = static_cast<std::uint64_t>(found - remaining.begin());
    index += digit * factorial(items.size() - 1 - i);
    remaining.erase(found);
  }
  return index;
}

}  // namespace optune::search_space::detail
