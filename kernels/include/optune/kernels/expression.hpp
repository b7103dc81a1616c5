// Expression: one arithmetic or boolean formula of a kernel file (kernel_file.hpp) over named
// integers: extents, knob values and device limits. Kernel files use them for `flops`, `bytes`, a
// buffer's `count`, a scalar's `value`, the constraint `rules` and the `[launch]` sizes.
//
// Parsed once by muparser (Debian's libmuparser-dev), then evaluated many times (once per config
// for rules and launch sizes) with the names' values passed in the order the names were given.
// muparser computes in double, which is exact for the integers kernel files deal in (below 2^53).
//
// The language, as a kernel file's author sees it:
//   numbers       4096, 0.5, 1e6
//   arithmetic    + - * / ^ (power), unary -, parentheses; `/` is exact division: 5 / 2 is 2.5
//   `%`           floored modulo, as Python's (the language of Kernel Tuner's restrictions):
//                 a % b = a - b * floor(a / b), so -7 % 3 is 2; a % 0 is NaN
//   comparisons   == != < <= > >=, giving 1 or 0
//   logic         && || and prefix ! (not); any value other than 0 is true
//   choice        cond ? a : b
//   functions     min(a, b, ...), max(a, b, ...), floor(x), ceil(x),
//                 div(a, b) = floor(a / b) (C's integer division for positive operands),
//                 ceil_div(a, b) = ceil(a / b) (work-groups needed to cover a with groups of b),
//                 and muparser's own (abs, sqrt, log2, rint, ...)
// Precedence, loosest first: ?:, ||, &&, comparisons, + -, * / % and unary - !, ^.
//
// Where an integer is required (evaluate_integer: counts, launch sizes), a result that is not a
// finite integer is an error naming the expression; division does not round silently. Where a
// condition is required (evaluate_condition: rules), NaN (a % 0, 0 / 0) counts as false.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace optune::kernels {

// Past 2^53 doubles no longer hold every integer: a value beyond it is not an exact integer, and a
// knob value beyond it would not reach -D intact.
inline constexpr double kLargestExactInteger = 9007199254740992.0;

class Expression {
 public:
  // Parses `text`, which may name only `names` (and muparser's functions and constants such as
  // _pi). Throws std::invalid_argument with a one-line message: `cannot parse "1 +": unexpected
  // end of expression at position 3`, or `unknown name 'TIL' in "TIL % 4"`. Names must be distinct
  // identifiers that are not a built-in function's name (std::invalid_argument otherwise).
  Expression(std::string text, const std::vector<std::string>& names);

  const std::string& text() const;
  // The names given to the constructor, and the subset the expression uses (in the given order).
  const std::vector<std::string>& names() const;
  const std::vector<std::string>& used_names() const;
  bool uses(const std::string& name) const;

  // values[i] is the value of names()[i]; std::invalid_argument when the counts differ.
  // Safe to call from several threads at once (each evaluation takes the expression's lock:
  // muparser evaluates through one set of variable slots).
  double evaluate(std::span<const double> values) const;
  // Throws std::domain_error `"N / WPT" is 512.5, not an integer` unless the value is a finite
  // integer of at most 2^53 in magnitude (beyond that, doubles skip integers).
  std::int64_t evaluate_integer(std::span<const double> values) const;
  // Nonzero is true; NaN is false.
  bool evaluate_condition(std::span<const double> values) const;

 private:
  struct Parsed;
  std::shared_ptr<const Parsed> parsed_;  // immutable once built, so copies share it
};

// Whether `name` can be a name in expressions (and a preprocessor define): a C identifier that
// does not start with '_' (muparser's constants do) and is not one of muparser's function names.
bool is_expression_name(const std::string& name);

}  // namespace optune::kernels
