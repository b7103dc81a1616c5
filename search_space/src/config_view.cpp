// ConfigView: a config's knob values by name, for constraints and for code emission.
#include <stdexcept>

#include "knob_options.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::search_space {
namespace {

// The knob of the requested kind, or std::invalid_argument naming it: asking a choice for a
// split factor is a bug in a template, and it should say which knob.
template <typename KnobType>
const KnobType& knob_as(const ConfigSpace& space, std::size_t index, const char* kind) {
  const auto* knob = std::get_if<KnobType>(&space.knobs()[index]);
  if (knob == nullptr) {
    const Knob& actual = space.knobs()[index];
    throw std::invalid_argument("knob '" + detail::knob_name(actual) + "' has kind '" +
                                detail::knob_kind(actual) + "', not '" + kind + "'");
  }
  return *knob;
}

}  // namespace

SplitValue ConfigView::split(const std::string& knob) const {
  const std::size_t k = space_.knob_index(knob);
  return space_.split_value(k, config_.options.at(k));
}

std::int64_t ConfigView::split_factor(const std::string& knob, int i) const {
  const std::size_t k = space_.knob_index(knob);
  knob_as<SplitKnob>(space_, k, "split");
  const SplitValue& factors = space_.split_options_[k].at(config_.options.at(k));
  return factors.at(static_cast<std::size_t>(i));
}

const std::string& ConfigView::choice(const std::string& knob) const {
  const std::size_t k = space_.knob_index(knob);
  return knob_as<ChoiceKnob>(space_, k, "choice").options.at(config_.options.at(k));
}

bool ConfigView::has(const std::string& knob) const { return space_.index_by_name_.contains(knob); }

bool ConfigView::flag(const std::string& knob) const {
  const std::size_t k = space_.knob_index(knob);
  knob_as<BoolKnob>(space_, k, "bool");
  return config_.options.at(k) != 0;
}

std::int64_t ConfigView::integer(const std::string& knob) const {
  const std::size_t k = space_.knob_index(knob);
  return detail::int_value(knob_as<IntRangeKnob>(space_, k, "int"), config_.options.at(k));
}

double ConfigView::number(const std::string& knob) const {
  const std::size_t k = space_.knob_index(knob);
  return knob_as<ValuesKnob>(space_, k, "values").values.at(config_.options.at(k));
}

PermutationValue ConfigView::permutation(const std::string& knob) const {
  const std::size_t k = space_.knob_index(knob);
  return detail::permutation_at(knob_as<PermutationKnob>(space_, k, "permutation").items,
                                config_.options.at(k));
}

}  // namespace optune::search_space
