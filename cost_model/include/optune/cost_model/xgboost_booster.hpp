// RAII wrappers over the XGBoost C API: a training/prediction matrix (DMatrix) and a Booster.
// Every failing call becomes an XGBoostError carrying XGBGetLastError()'s message, so nothing
// above this file sees a return code. The handles are opaque here (the C API's handles are void*)
// so that users of the cost model need not find XGBoost's headers.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace optune::cost_model {

class XGBoostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A dense float matrix, row-major, NaN marking a missing value.
class DMatrix {
 public:
  // values.size() must be rows * cols; throws std::invalid_argument otherwise.
  DMatrix(std::span<const float> values, std::size_t rows, std::size_t cols);
  ~DMatrix();
  DMatrix(DMatrix&& other) noexcept;
  DMatrix& operator=(DMatrix&& other) noexcept;
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;

  void set_labels(std::span<const float> labels);    // one per row
  void set_weights(std::span<const float> weights);  // one per row, or per group when ranking
  // Sizes of consecutive groups of rows (query groups for ranking objectives); they sum to rows.
  void set_group_sizes(std::span<const unsigned> sizes);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
};

class Booster {
 public:
  // A fresh, untrained booster with "verbosity" 0 and the given thread count: to load a model into.
  explicit Booster(int nthread = 1);
  // A booster to train on `train`: XGBoost learns the feature count from the matrices a booster
  // is created with. `train` must outlive the booster's training.
  Booster(const DMatrix& train, int nthread);
  ~Booster();
  Booster(Booster&& other) noexcept;
  Booster& operator=(Booster&& other) noexcept;
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;

  void set_param(const std::string& name, const std::string& value);
  // One boosting round on `train`; iteration counts from 0.
  void update_one_iter(int iteration, const DMatrix& train);

  // Raw predictions (margin for ranking objectives, value for regression), one per row.
  std::vector<float> predict(const DMatrix& data) const;
  // The same, without building a DMatrix (XGBoost's in-place prediction): the fast path for
  // scoring many small batches.
  std::vector<float> predict_dense(std::span<const float> values, std::size_t rows,
                                   std::size_t cols) const;

  std::size_t num_features() const;  // 0 before training

  // String attributes, saved with the model.
  void set_attribute(const std::string& key, const std::string& value);
  std::string attribute(const std::string& key) const;  // "" when absent

  // Format by extension, as XGBoost decides: ".json" JSON, ".ubj" universal binary JSON.
  void save(const std::filesystem::path& path) const;
  static Booster load(const std::filesystem::path& path, int nthread = 1);
  std::string save_to_buffer() const;  // JSON
  static Booster load_from_buffer(std::span<const char> buffer, int nthread = 1);

  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
};

}  // namespace optune::cost_model
