// A knob is one tunable decision of a schedule template, with a finite, ordered list of options.
// ConfigSpace stores knobs; a Config picks one option per knob. Options are ordered so that
// neighbouring indices are "close" (split factors ascending, ints ascending), which is what
// annealing and genetic search rely on when they step to a neighbour.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace optune::search_space {

// How a split knob enumerates factorisations of an extent.
enum class SplitPolicy {
  kDivisors,    // every factor divides its parent exactly (no edge handling needed)
  kPowerOfTwo,  // factors are powers of two; the product may exceed the extent (edges handled)
  kCandidates,  // factors taken from an explicit list; the product may exceed the extent
};

// An extent split into `num_outputs` factors, outermost first. The outermost factor is implied
// (ceil(extent / product of the inner factors)), as in AutoTVM's define_split.
struct SplitKnob {
  std::string name;
  std::int64_t extent = 1;
  int num_outputs = 2;
  SplitPolicy policy = SplitPolicy::kDivisors;
  std::vector<std::int64_t> candidates;  // only for kCandidates
  std::int64_t max_factor = 0;           // 0: no bound; else inner factors are at most this
};

// One of several named options (e.g. "mnk", "none").
struct ChoiceKnob {
  std::string name;
  std::vector<std::string> options;
};

struct BoolKnob {
  std::string name;
};

// Integers lo, lo+step, ..., up to and including hi.
struct IntRangeKnob {
  std::string name;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::int64_t step = 1;
};

// An order of named items (loop order): all n! permutations, in lexicographic order of indices.
// At most 12 items: a Config holds each option index in 32 bits, and 13! does not fit.
struct PermutationKnob {
  std::string name;
  std::vector<std::string> items;
};

// One of an explicit list of numbers, in the order given (Kernel Tuner's tune_params: block sizes,
// tile sizes, 0/1 switches). Declared kernels and measured landscapes have such knobs: their values
// are only known as a list. Values must be distinct and finite; JSON writes integral ones as
// integers.
struct ValuesKnob {
  std::string name;
  std::vector<double> values;
};

using Knob = std::variant<SplitKnob, ChoiceKnob, BoolKnob, IntRangeKnob, PermutationKnob, ValuesKnob>;

// The value a config gives a knob, resolved from its option index.
using SplitValue = std::vector<std::int64_t>;        // num_outputs factors, outermost first
using PermutationValue = std::vector<std::string>;   // items in the chosen order

}  // namespace optune::search_space
