// The only file that includes XGBoost's C API: each call is checked here and a failure becomes
// an XGBoostError with the library's own message.
#include "optune/cost_model/xgboost_booster.hpp"

#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace optune::cost_model {
namespace {

// XGBoost's message without the stack trace it appends: one readable line.
std::string last_error() {
  std::string message = XGBGetLastError();
  if (const auto trace = message.find("Stack trace:"); trace != std::string::npos)
    message.erase(trace);
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back())))
    message.pop_back();
  return message;
}

void check(int return_code, const char* call) {
  if (return_code == 0) return;
  throw XGBoostError(fmt::format("XGBoost {} failed: {}", call, last_error()));
}

// The JSON "__array_interface__" XGBoost's in-place prediction reads: a pointer and a shape, no
// copy. "<f4" is little-endian float32, the only layout optune builds for.
std::string array_interface(const float* data, std::size_t rows, std::size_t cols) {
  return fmt::format(R"({{"data": [{}, true], "shape": [{}, {}], "typestr": "<f4", "version": 3}})",
                     reinterpret_cast<std::uintptr_t>(data), rows, cols);
}

std::vector<float> copy_result(const bst_ulong* shape, bst_ulong dim, const float* result) {
  std::size_t count = 1;
  for (bst_ulong i = 0; i < dim; ++i) count *= static_cast<std::size_t>(shape[i]);
  return std::vector<float>(result, result + count);
}

// Prediction of every tree, as a value (not a margin): "type": 0.
constexpr const char* kPredictConfig =
    R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, )"
    R"("strict_shape": false, "cache_id": 0, "missing": NaN})";

}  // namespace

// ---- DMatrix ----

DMatrix::DMatrix(std::span<const float> values, std::size_t rows, std::size_t cols)
    : rows_(rows), cols_(cols) {
  if (values.size() != rows * cols) {
    throw std::invalid_argument(
        fmt::format("DMatrix: {} values for a {}x{} matrix", values.size(), rows, cols));
  }
  DMatrixHandle handle = nullptr;
  check(XGDMatrixCreateFromMat(values.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(),
                               &handle),
        "XGDMatrixCreateFromMat");
  handle_ = handle;
}

DMatrix::~DMatrix() {
  if (handle_ != nullptr) XGDMatrixFree(handle_);
}

DMatrix::DMatrix(DMatrix&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), rows_(other.rows_), cols_(other.cols_) {}

DMatrix& DMatrix::operator=(DMatrix&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) XGDMatrixFree(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    rows_ = other.rows_;
    cols_ = other.cols_;
  }
  return *this;
}

void DMatrix::set_labels(std::span<const float> labels) {
  if (labels.size() != rows_) {
    throw std::invalid_argument(
        fmt::format("DMatrix: {} labels for {} rows", labels.size(), rows_));
  }
  check(XGDMatrixSetFloatInfo(handle_, "label", labels.data(), labels.size()),
        "XGDMatrixSetFloatInfo(label)");
}

void DMatrix::set_weights(std::span<const float> weights) {
  check(XGDMatrixSetFloatInfo(handle_, "weight", weights.data(), weights.size()),
        "XGDMatrixSetFloatInfo(weight)");
}

void DMatrix::set_group_sizes(std::span<const unsigned> sizes) {
  std::size_t total = 0;
  for (unsigned size : sizes) total += size;
  if (total != rows_) {
    throw std::invalid_argument(fmt::format("DMatrix: groups cover {} rows of {}", total, rows_));
  }
  // "group" takes sizes; XGBoost turns them into the group pointer itself.
  check(XGDMatrixSetUIntInfo(handle_, "group", sizes.data(), sizes.size()),
        "XGDMatrixSetUIntInfo(group)");
}

// ---- Booster ----

Booster::Booster(int nthread) {
  BoosterHandle handle = nullptr;
  check(XGBoosterCreate(nullptr, 0, &handle), "XGBoosterCreate");
  handle_ = handle;
  set_param("verbosity", "0");
  set_param("nthread", std::to_string(nthread));
}

Booster::Booster(const DMatrix& train, int nthread) {
  const DMatrixHandle cache[] = {train.handle()};
  BoosterHandle handle = nullptr;
  check(XGBoosterCreate(cache, 1, &handle), "XGBoosterCreate");
  handle_ = handle;
  set_param("verbosity", "0");
  set_param("nthread", std::to_string(nthread));
}

Booster::~Booster() {
  if (handle_ != nullptr) XGBoosterFree(handle_);
}

Booster::Booster(Booster&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

Booster& Booster::operator=(Booster&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) XGBoosterFree(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void Booster::set_param(const std::string& name, const std::string& value) {
  const int code = XGBoosterSetParam(handle_, name.c_str(), value.c_str());
  if (code != 0) {
    throw XGBoostError(fmt::format("XGBoost parameter {}={}: {}", name, value, last_error()));
  }
}

void Booster::update_one_iter(int iteration, const DMatrix& train) {
  check(XGBoosterUpdateOneIter(handle_, iteration, train.handle()), "XGBoosterUpdateOneIter");
}

std::vector<float> Booster::predict(const DMatrix& data) const {
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDMatrix(handle_, data.handle(), kPredictConfig, &shape, &dim, &result),
        "XGBoosterPredictFromDMatrix");
  return copy_result(shape, dim, result);
}

std::vector<float> Booster::predict_dense(std::span<const float> values, std::size_t rows,
                                          std::size_t cols) const {
  if (values.size() != rows * cols) {
    throw std::invalid_argument(
        fmt::format("predict: {} values for a {}x{} matrix", values.size(), rows, cols));
  }
  if (rows == 0) return {};
  const std::string interface = array_interface(values.data(), rows, cols);
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  check(XGBoosterPredictFromDense(handle_, interface.c_str(), kPredictConfig, nullptr, &shape, &dim,
                                  &result),
        "XGBoosterPredictFromDense");
  return copy_result(shape, dim, result);
}

std::size_t Booster::num_features() const {
  bst_ulong count = 0;
  check(XGBoosterGetNumFeature(handle_, &count), "XGBoosterGetNumFeature");
  return static_cast<std::size_t>(count);
}

void Booster::set_attribute(const std::string& key, const std::string& value) {
  check(XGBoosterSetAttr(handle_, key.c_str(), value.c_str()), "XGBoosterSetAttr");
}

std::string Booster::attribute(const std::string& key) const {
  const char* value = nullptr;
  int success = 0;
  check(XGBoosterGetAttr(handle_, key.c_str(), &value, &success), "XGBoosterGetAttr");
  return success != 0 && value != nullptr ? std::string(value) : std::string();
}

void Booster::save(const std::filesystem::path& path) const {
  check(XGBoosterSaveModel(handle_, path.string().c_str()), "XGBoosterSaveModel");
}

Booster Booster::load(const std::filesystem::path& path, int nthread) {
  Booster booster(nthread);
  check(XGBoosterLoadModel(booster.handle_, path.string().c_str()), "XGBoosterLoadModel");
  // Loading resets the learner's configuration; keep it quiet and on the threads we were given.
  booster.set_param("verbosity", "0");
  booster.set_param("nthread", std::to_string(nthread));
  return booster;
}

std::string Booster::save_to_buffer() const {
  bst_ulong length = 0;
  const char* data = nullptr;
  check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "json"})", &length, &data),
        "XGBoosterSaveModelToBuffer");
  return std::string(data, data + length);
}

Booster Booster::load_from_buffer(std::span<const char> buffer, int nthread) {
  Booster booster(nthread);
  check(XGBoosterLoadModelFromBuffer(booster.handle_, buffer.data(), buffer.size()),
        "XGBoosterLoadModelFromBuffer");
  booster.set_param("verbosity", "0");
  booster.set_param("nthread", std::to_string(nthread));
  return booster;
}

}  // namespace optune::cost_model
