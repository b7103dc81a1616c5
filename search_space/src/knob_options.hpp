// Option arithmetic of single knobs, private to search_space: how many options a knob has, and
// how an option index turns into a value and back. ConfigSpace composes these per knob; nothing
// here knows about constraints or about other knobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/search_space/knob.hpp"

namespace optune::search_space::detail {

// A Config stores each option index in 32 bits, so no knob may have more options than this.
inline constexpr std::uint64_t kMaxOptionsPerKnob = std::uint64_t{1} << 32;
// Split options are materialised (they are few in practice); this bounds memory for odd inputs.
inline constexpr std::size_t kMaxSplitOptions = std::size_t{1} << 20;
// 20! is the largest factorial that fits in 64 bits.
inline constexpr std::size_t kMaxPermutationItems = 20;

const std::string& knob_name(const Knob& knob);
// "split", "choice", "bool", "int", "permutation" or "values": the names used in JSON and by `optune space`.
const char* knob_kind(const Knob& knob);

// Throws std::invalid_argument (naming the knob) when the knob is malformed or has no options.
void check_knob(const Knob& knob);

// All factorisations of a split knob, each with num_outputs factors, outermost (implied) first,
// ordered ascending lexicographically on the inner factors. Throws std::invalid_argument when
// there are none or more than kMaxSplitOptions.
std::vector<SplitValue> enumerate_split_options(const SplitKnob& knob);

std::uint64_t int_option_count(const IntRangeKnob& knob);
std::int64_t int_value(const IntRangeKnob& knob, std::uint64_t option);

// A value of a values knob as JSON: an integer when it is integral, else a number.
nlohmann::json values_json(double value);

std::uint64_t factorial(std::size_t n);  // n <= kMaxPermutationItems
// The index-th permutation in lexicographic order, decoded from its Lehmer code.
PermutationValue permutation_at(const std::vector<std::string>& items, std::uint64_t index);
// Inverse of permutation_at; throws std::invalid_argument when `order` is not a permutation of
// `items`.
std::uint64_t permutation_index(const std::vector<std::string>& items,
                                const std::vector<std::string>& order);

}  // namespace optune::search_space::detail
