#include "optune/kernels/expression.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <muParser.h>

namespace optune::kernels {
namespace {

double floored_modulo(double a, double b) { return a - b * std::floor(a / b); }
double logical_not(double a) { return a == 0 ? 1 : 0; }
double floor_of(double x) { return std::floor(x); }
double ceil_of(double x) { return std::ceil(x); }
double floor_division(double a, double b) { return std::floor(a / b); }
double ceiling_division(double a, double b) { return std::ceil(a / b); }

// The functions and operators of expression.hpp's language that muparser lacks.
void define_language(mu::Parser& parser) {
  parser.DefineOprt("%", floored_modulo, mu::prMUL_DIV, mu::oaLEFT, true);
  parser.DefineInfixOprt("!", logical_not, mu::prINFIX);
  parser.DefineFun("floor", floor_of);
  parser.DefineFun("ceil", ceil_of);
  parser.DefineFun("div", floor_division);
  parser.DefineFun("ceil_div", ceiling_division);
}

const std::set<std::string>& function_names() {
  static const std::set<std::string> names = [] {
    mu::Parser parser;
    define_language(parser);
    std::set<std::string> all;
    for (const auto& [name, callback] : parser.GetFunDef()) all.insert(name);
    return all;
  }();
  return names;
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// muparser reads a lone '=' (and '+=', '*=', ...) as assignment to a variable, which would let a
// rule change an extent's slot; kernel files compare, they never assign.
void reject_assignment(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    const char before = i > 0 ? text[i - 1] : ' ';
    const char after = i + 1 < text.size() ? text[i + 1] : ' ';
    if (after == '=') {
      ++i;  // "==": skip its second '='
      continue;
    }
    if (before == '<' || before == '>' || before == '!') continue;
    throw std::invalid_argument("cannot parse " + quoted(text) + ": '=' assigns; compare with '=='");
  }
}

// Records the names muparser finds that are not defined, so the error can name them all at once
// instead of muparser's "unexpected token".
struct UnknownNames {
  std::vector<std::string> names;
  std::vector<std::unique_ptr<double>> slots;
};

double* record_unknown_name(const char* name, void* user_data) {
  auto* unknown = static_cast<UnknownNames*>(user_data);
  unknown->names.emplace_back(name);
  unknown->slots.push_back(std::make_unique<double>(0));
  return unknown->slots.back().get();
}

}  // namespace

struct Expression::Parsed {
  std::string text;
  std::vector<std::string> names;
  std::vector<std::string> used_names;
  mutable std::mutex lock;  // guards slots and parser, which every evaluation writes
  mutable std::vector<double> slots;
  mutable mu::Parser parser;
};

bool is_expression_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  const bool identifier = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  return identifier && !function_names().count(name);
}

Expression::Expression(std::string text, const std::vector<std::string>& names) {
  auto parsed = std::make_shared<Parsed>();
  parsed->text = std::move(text);
  parsed->names = names;
  parsed->slots.assign(names.size(), 0.0);
  const std::string& source = parsed->text;
  if (source.find_first_not_of(" \t") == std::string::npos)
    throw std::invalid_argument("empty expression");
  reject_assignment(source);
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!is_expression_name(name)) throw std::invalid_argument("'" + name + "' cannot be a name in expressions");
    if (!seen.insert(name).second) throw std::invalid_argument("name '" + name + "' is given twice");
  }
  mu::Parser& parser = parsed->parser;
  UnknownNames unknown;
  try {
    define_language(parser);
    for (std::size_t i = 0; i < names.size(); ++i) parser.DefineVar(names[i], &parsed->slots[i]);
    parser.SetVarFactory(record_unknown_name, &unknown);
    parser.SetExpr(source);
    const mu::varmap_type& used = parser.GetUsedVar();
    if (!unknown.names.empty()) throw std::invalid_argument("unknown name '" + unknown.names.front() + "' in " + quoted(source));
    for (const std::string& name : names)
      if (used.count(name)) parsed->used_names.push_back(name);
    parser.Eval();  // a trial with zeros, to learn how many values the text gives
    if (parser.GetNumResults() != 1)
      throw std::invalid_argument("cannot parse " + quoted(source) + ": one value expected, not a list");
  } catch (const mu::Parser::exception_type& error) {
    throw std::invalid_argument("cannot parse " + quoted(source) + ": " + error.GetMsg());
  }
  // No name may appear after parsing: evaluation must never reach the factory's dead slots.
  parser.SetVarFactory(nullptr, nullptr);
  parsed_ = std::move(parsed);
}

const std::string& Expression::text() const { return parsed_->text; }
const std::vector<std::string>& Expression::names() const { return parsed_->names; }
const std::vector<std::string>& Expression::used_names() const { return parsed_->used_names; }

bool Expression::uses(const std::string& name) const {
  const auto& used = parsed_->used_names;
  return std::find(used.begin(), used.end(), name) != used.end();
}

double Expression::evaluate(std::span<const double> values) const {
  if (values.size() != parsed_->names.size()) {
    throw std::invalid_argument("expression " + quoted(parsed_->text) + ": " + std::to_string(values.size()) +
                                " values for " + std::to_string(parsed_->names.size()) + " names");
  }
  std::lock_guard guard(parsed_->lock);
  std::copy(values.begin(), values.end(), parsed_->slots.begin());
  try {
    return parsed_->parser.Eval();
  } catch (const mu::Parser::exception_type& error) {
    throw std::domain_error(quoted(parsed_->text) + ": " + error.GetMsg());
  }
}

std::int64_t Expression::evaluate_integer(std::span<const double> values) const {
  const double value = evaluate(values);
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) <= kLargestExactInteger)
    return static_cast<std::int64_t>(value);
  std::ostringstream message;
  message.precision(15);  // enough for every exact integer, short for 512.5
  message << quoted(parsed_->text) << " is " << value << ", not an integer";
  throw std::domain_error(message.str());
}

bool Expression::evaluate_condition(std::span<const double> values) const {
  const double value = evaluate(values);
  return !std::isnan(value) && value != 0;
}

}  // namespace optune::kernels
