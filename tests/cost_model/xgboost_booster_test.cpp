#include "optune/cost_model/xgboost_booster.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "optune/cost_model/cost_model.hpp"

namespace optune::cost_model {
namespace {

// y = 2 x0 - x1 on a grid: a booster must learn it closely.
struct LinearData {
  std::vector<float> values;
  std::vector<float> labels;
  std::size_t rows = 0;
};

LinearData linear_data() {
  LinearData data;
  for (int a = 0; a < 10; ++a) {
    for (int b = 0; b < 10; ++b) {
      data.values.push_back(static_cast<float>(a));
      data.values.push_back(static_cast<float>(b));
      data.labels.push_back(static_cast<float>(2 * a - b));
      ++data.rows;
    }
  }
  return data;
}

Booster trained_booster(const LinearData& data) {
  DMatrix train(data.values, data.rows, 2);
  train.set_labels(data.labels);
  Booster booster(train, 1);
  booster.set_param("objective", "reg:squarederror");
  booster.set_param("max_depth", "4");
  for (int i = 0; i < 50; ++i) booster.update_one_iter(i, train);
  return booster;
}

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("optune_cost_model_" + std::to_string(::getpid()) + "_" + name);
}

TEST(XGBoostBooster, ReportsLinkedVersion) {
  EXPECT_EQ(xgboost_version().rfind("1.", 0), 0u) << xgboost_version();
}

TEST(XGBoostBooster, LearnsSmallRegressionAndPredictsBothWays) {
  const LinearData data = linear_data();
  const Booster booster = trained_booster(data);
  EXPECT_EQ(booster.num_features(), 2u);
  const std::vector<float> from_dense = booster.predict_dense(data.values, data.rows, 2);
  const std::vector<float> from_matrix = booster.predict(DMatrix(data.values, data.rows, 2));
  ASSERT_EQ(from_dense.size(), data.rows);
  ASSERT_EQ(from_matrix.size(), data.rows);
  for (std::size_t i = 0; i < data.rows; ++i) {
    EXPECT_NEAR(from_dense[i], data.labels[i], 0.5) << i;
    EXPECT_FLOAT_EQ(from_dense[i], from_matrix[i]) << i;
  }
}

TEST(XGBoostBooster, MissingValuesAreAccepted) {
  const Booster booster = trained_booster(linear_data());
  const std::vector<float> row{NAN, 3.0f};
  const std::vector<float> prediction = booster.predict_dense(row, 1, 2);
  ASSERT_EQ(prediction.size(), 1u);
  EXPECT_TRUE(std::isfinite(prediction[0]));
}

TEST(XGBoostBooster, FileAndBufferRoundTripsPredictIdentically) {
  const LinearData data = linear_data();
  Booster booster = trained_booster(data);
  booster.set_attribute("note", "kept");
  const auto path = temp_path("booster.json");
  booster.save(path);
  const Booster from_file = Booster::load(path, 1);
  const std::string buffer = booster.save_to_buffer();
  const Booster from_buffer = Booster::load_from_buffer(buffer, 1);
  std::filesystem::remove(path);

  EXPECT_EQ(from_file.attribute("note"), "kept");
  EXPECT_EQ(from_file.attribute("absent"), "");
  const auto expected = booster.predict_dense(data.values, data.rows, 2);
  EXPECT_EQ(from_file.predict_dense(data.values, data.rows, 2), expected);
  EXPECT_EQ(from_buffer.predict_dense(data.values, data.rows, 2), expected);
}

TEST(XGBoostBooster, LoadingMissingFileThrowsWithXGBoostMessage) {
  try {
    Booster::load(temp_path("does_not_exist.json"));
    FAIL() << "no exception";
  } catch (const XGBoostError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("XGBoosterLoadModel"), std::string::npos) << message;
    EXPECT_EQ(message.find("Stack trace"), std::string::npos) << message;
  }
}

TEST(XGBoostBooster, LoadingCorruptBufferThrows) {
  const std::string garbage = "{\"this is\": not a model";
  EXPECT_THROW(Booster::load_from_buffer(garbage), XGBoostError);
}

TEST(XGBoostBooster, BadParameterSurfacesAsException) {
  const LinearData data = linear_data();
  DMatrix train(data.values, data.rows, 2);
  train.set_labels(data.labels);
  Booster booster(train, 1);
  booster.set_param("objective", "no:such_objective");
  EXPECT_THROW(booster.update_one_iter(0, train), XGBoostError);
}

TEST(XGBoostBooster, PredictingWithWrongFeatureCountThrows) {
  const Booster booster = trained_booster(linear_data());
  const std::vector<float> row{1, 2, 3};
  EXPECT_THROW(booster.predict_dense(row, 1, 3), XGBoostError);
}

TEST(XGBoostBooster, MatrixChecksShapesOfItsInputs) {
  const std::vector<float> values(6, 1.0f);
  EXPECT_THROW(DMatrix(values, 4, 2), std::invalid_argument);
  DMatrix matrix(values, 3, 2);
  const std::vector<float> two_labels{1, 2};
  EXPECT_THROW(matrix.set_labels(two_labels), std::invalid_argument);
  const std::vector<unsigned> groups{1, 1};
  EXPECT_THROW(matrix.set_group_sizes(groups), std::invalid_argument);
  const std::vector<unsigned> good_groups{1, 2};
  EXPECT_NO_THROW(matrix.set_group_sizes(good_groups));
}

}  // namespace
}  // namespace optune::cost_model
