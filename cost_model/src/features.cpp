// Feature extraction: the knob encodings by value, the workload's extents (its operator's entry
// in the catalog says which), derived features.
#include "optune/cost_model/features.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "optune/kernels/operator_catalog.hpp"

namespace optune::cost_model {
namespace {

using search_space::BoolKnob;
using search_space::ChoiceKnob;
using search_space::Config;
using search_space::IntRangeKnob;
using search_space::Knob;
using search_space::PermutationKnob;
using search_space::SplitKnob;
using search_space::ValuesKnob;

constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();
// Knobs whose option table would exceed this many floats (4 MiB) are encoded on the fly.
constexpr std::uint64_t kMaxTableFloats = 1u << 20;

float log2_or_missing(double value) {
  return value > 0 ? static_cast<float>(std::log2(value)) : kMissing;
}

// A values knob whose values are all powers of two (block sizes, vector widths) is encoded as
// log2, so one step of the feature is one doubling; any other list keeps its values.
bool all_powers_of_two(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double value) {
    if (value < 1 || value != std::trunc(value) || value > 9.0e15) return false;
    const auto integral = static_cast<std::uint64_t>(value);
    return (integral & (integral - 1)) == 0;
  });
}

// Column names of one knob, in encoding order.
std::vector<std::string> knob_feature_names(const Knob& knob) {
  std::vector<std::string> names;
  std::visit(
      [&](const auto& typed) {
        using Type = std::decay_t<decltype(typed)>;
        if constexpr (std::is_same_v<Type, SplitKnob>) {
          for (int i = 0; i < typed.num_outputs; ++i)
            names.push_back(fmt::format("{}.f{}", typed.name, i));
        } else if constexpr (std::is_same_v<Type, ChoiceKnob>) {
          for (const auto& option : typed.options) names.push_back(typed.name + "=" + option);
        } else if constexpr (std::is_same_v<Type, BoolKnob>) {
          names.push_back(typed.name);
        } else if constexpr (std::is_same_v<Type, IntRangeKnob>) {
          names.push_back(typed.name);
          names.push_back(typed.name + ".log2");
        } else if constexpr (std::is_same_v<Type, ValuesKnob>) {
          names.push_back(all_powers_of_two(typed.values) ? typed.name + ".log2" : typed.name);
        } else {
          for (const auto& item : typed.items) names.push_back(typed.name + ".pos." + item);
        }
      },
      knob);
  return names;
}

// The catalog's shape features of an operator and its dtype (log2 of the element's bytes, and
// whether it is an integer: records of one dtype of a template inform another, as other shapes
// do); a kernel file's are log2 of its extents, so that a model of one kernel transfers across its
// problem sizes as an operator's does.
std::vector<std::pair<std::string, float>> shape_features(const kernels::Workload& workload) {
  if (workload.op != kernels::Op::kKernel) {
    auto features = kernels::operator_entry(workload.op).shape_features(workload);
    features.emplace_back("dtype.log2_bytes",
                          static_cast<float>(std::log2(static_cast<double>(kernels::data_type_bytes(workload.dtype)))));
    features.emplace_back("dtype.integer", kernels::is_floating(workload.dtype) ? 0.0f : 1.0f);
    return features;
  }
  std::vector<std::pair<std::string, float>> features;
  for (const auto& extent : workload.kernel().extents)
    features.emplace_back("shape." + extent.name, static_cast<float>(std::log2(static_cast<double>(extent.value))));
  return features;
}

}  // namespace

FeatureExtractor::FeatureExtractor(search_space::ConfigSpace space) : space_(std::move(space)) {
  add_knob_columns();
  shape_offset_ = derived_offset_ = names_.size();
}

FeatureExtractor::FeatureExtractor(search_space::ConfigSpace space, kernels::Workload workload,
                                   kernels::DeviceInfo device,
                                   const kernels::KernelTemplate* kernel_template)
    : space_(std::move(space)),
      workload_(std::move(workload)),
      device_(std::move(device)),
      kernel_template_(kernel_template) {
  add_knob_columns();
  add_shape_columns();
  add_derived_columns();
}

void FeatureExtractor::add_knob_columns() {
  const auto& knobs = space_.knobs();
  knob_columns_.resize(knobs.size());
  for (std::size_t k = 0; k < knobs.size(); ++k) {
    std::vector<std::string> names = knob_feature_names(knobs[k]);
    KnobColumns& columns = knob_columns_[k];
    columns.offset = names_.size();
    columns.width = names.size();
    names_.insert(names_.end(), names.begin(), names.end());
    const std::uint64_t options = space_.option_count(k);
    if (options * std::max<std::size_t>(columns.width, 1) > kMaxTableFloats) continue;
    columns.table.resize(options * columns.width);
    for (std::uint32_t option = 0; option < options; ++option) {
      encode_option(k, option, columns.table.data() + option * columns.width);
    }
  }
}

void FeatureExtractor::add_shape_columns() {
  shape_offset_ = names_.size();
  for (auto& [name, value] : shape_features(*workload_)) {
    names_.push_back(name);
    shape_values_.push_back(value);
  }
}

void FeatureExtractor::add_derived_columns() {
  derived_offset_ = names_.size();
  if (kernel_template_ == nullptr) return;
  // The template promises the same names for every config; read them off its default config.
  const Config probe = kernel_template_->default_config(*workload_, device_, space_);
  for (const auto& [name, value] : kernel_template_->derived_features(
           *workload_, device_, search_space::ConfigView(space_, probe))) {
    names_.push_back("derived." + name);
  }
  derived_count_ = names_.size() - derived_offset_;
}

void FeatureExtractor::encode_option(std::size_t knob, std::uint32_t option, float* out) const {
  std::visit(
      [&](const auto& typed) {
        using Type = std::decay_t<decltype(typed)>;
        if constexpr (std::is_same_v<Type, SplitKnob>) {
          const search_space::SplitValue factors = space_.split_value(knob, option);
          for (std::size_t i = 0; i < factors.size(); ++i)
            out[i] = log2_or_missing(static_cast<double>(factors[i]));
        } else if constexpr (std::is_same_v<Type, ChoiceKnob>) {
          for (std::size_t i = 0; i < typed.options.size(); ++i) out[i] = i == option ? 1.0f : 0.0f;
        } else if constexpr (std::is_same_v<Type, BoolKnob>) {
          out[0] = option != 0 ? 1.0f : 0.0f;
        } else if constexpr (std::is_same_v<Type, IntRangeKnob>) {
          const std::int64_t value = typed.lo + static_cast<std::int64_t>(option) * typed.step;
          out[0] = static_cast<float>(value);
          out[1] = log2_or_missing(static_cast<double>(value));
        } else if constexpr (std::is_same_v<Type, ValuesKnob>) {
          const double value = typed.values[option];
          out[0] = all_powers_of_two(typed.values) ? log2_or_missing(value) : static_cast<float>(value);
        } else {
          const nlohmann::json order = space_.option_json(knob, option);
          for (std::size_t position = 0; position < order.size(); ++position) {
            const auto& item = order[position].template get_ref<const std::string&>();
            const auto found = std::find(typed.items.begin(), typed.items.end(), item);
            out[found - typed.items.begin()] = static_cast<float>(position);
          }
        }
      },
      space_.knobs()[knob]);
}

std::vector<float> FeatureExtractor::extract(const Config& config) const {
  std::vector<float> features(size());
  extract_into(config, features);
  return features;
}

void FeatureExtractor::extract_into(const Config& config, std::span<float> out) const {
  if (out.size() < size()) throw std::invalid_argument("feature buffer smaller than size()");
  if (config.options.size() != knob_columns_.size()) {
    throw std::invalid_argument("config does not match the feature extractor's space");
  }
  for (std::size_t k = 0; k < knob_columns_.size(); ++k) {
    const KnobColumns& columns = knob_columns_[k];
    const std::uint32_t option = config.options[k];
    if (option >= space_.option_count(k)) throw std::invalid_argument("config option out of range");
    float* target = out.data() + columns.offset;
    if (columns.table.empty()) {
      encode_option(k, option, target);
    } else {
      std::copy_n(columns.table.data() + option * columns.width, columns.width, target);
    }
  }
  std::copy(shape_values_.begin(), shape_values_.end(), out.data() + shape_offset_);
  if (derived_count_ == 0) return;
  const auto derived = kernel_template_->derived_features(*workload_, device_,
                                                          search_space::ConfigView(space_, config));
  if (derived.size() != derived_count_) {
    throw std::logic_error(fmt::format("template {} gave {} derived features, {} expected",
                                       kernel_template_->name(), derived.size(), derived_count_));
  }
  for (std::size_t i = 0; i < derived_count_; ++i) {
    const double value = derived[i].second;
    out[derived_offset_ + i] = std::isfinite(value) ? static_cast<float>(value) : kMissing;
  }
}

FeatureMatrix FeatureExtractor::extract_batch(std::span<const Config> configs) const {
  FeatureMatrix matrix;
  matrix.rows = configs.size();
  matrix.cols = size();
  matrix.values.resize(matrix.rows * matrix.cols);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    extract_into(configs[i], std::span<float>(matrix.values).subspan(i * matrix.cols, matrix.cols));
  }
  return matrix;
}

}  // namespace optune::cost_model
