// FeatureExtractor: turns a Config of one task into the numbers the cost model learns from.
// Knobs are encoded by VALUE, not by option index (a split as log2 of its factors, a choice
// one-hot by option name, a permutation as each item's position), and the workload's extents
// are features too, so a feature means the same thing for every shape of one template and a
// model trained on records of other shapes transfers. A template may add derived features
// (KernelTemplate::derived_features: footprints, intensity, ...) that the knob values alone hide.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::cost_model {

// Row-major, one row per config; NaN marks a missing value.
struct FeatureMatrix {
  std::vector<float> values;
  std::size_t rows = 0;
  std::size_t cols = 0;

  std::span<const float> row(std::size_t i) const { return {values.data() + i * cols, cols}; }
};

class FeatureExtractor {
 public:
  // Knob features only (no workload, no template): for spaces built by hand, e.g. in tests.
  explicit FeatureExtractor(search_space::ConfigSpace space);
  // Knob features, then log2 of the workload's extents ("shape.M", ...; pad as log2(1 + pad)
  // since it may be 0), then the template's derived features when `kernel_template` is given.
  // The template must outlive the extractor (templates are static in the registry).
  FeatureExtractor(search_space::ConfigSpace space, kernels::Workload workload,
                   kernels::DeviceInfo device,
                   const kernels::KernelTemplate* kernel_template = nullptr);

  // Stable names, one per column: "<split>.f0".., "<choice>=<option>", "<bool>", "<int>",
  // "<int>.log2", "<permutation>.pos.<item>", "<values>" (or "<values>.log2" when every value
  // is a power of two), "shape.<extent>", "derived.<name>".
  const std::vector<std::string>& names() const { return names_; }
  std::size_t size() const { return names_.size(); }
  const search_space::ConfigSpace& space() const { return space_; }

  std::vector<float> extract(const search_space::Config& config) const;
  // Writes size() values; throws std::invalid_argument when out is too small or the config does
  // not fit the space.
  void extract_into(const search_space::Config& config, std::span<float> out) const;
  FeatureMatrix extract_batch(std::span<const search_space::Config> configs) const;

 private:
  // The columns of one knob. Small knobs keep a table of every option's features (option-major),
  // so extraction is a copy; large ones (long permutations, wide int ranges) compute them.
  struct KnobColumns {
    std::size_t offset = 0;
    std::size_t width = 0;
    std::vector<float> table;
  };

  void add_knob_columns();
  void add_shape_columns();
  void add_derived_columns();
  void encode_option(std::size_t knob, std::uint32_t option, float* out) const;

  search_space::ConfigSpace space_;
  std::optional<kernels::Workload> workload_;
  kernels::DeviceInfo device_;
  const kernels::KernelTemplate* kernel_template_ = nullptr;
  std::vector<std::string> names_;
  std::vector<KnobColumns> knob_columns_;
  std::vector<float> shape_values_;  // the same for every config of this task
  std::size_t shape_offset_ = 0;
  std::size_t derived_offset_ = 0;
  std::size_t derived_count_ = 0;
};

}  // namespace optune::cost_model
