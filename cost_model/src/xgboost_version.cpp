#include <xgboost/c_api.h>

#include <string>

#include "optune/cost_model/cost_model.hpp"

namespace optune::cost_model {

std::string xgboost_version() {
  int major = 0, minor = 0, patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace optune::cost_model
