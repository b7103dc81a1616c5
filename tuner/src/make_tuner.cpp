#include <stdexcept>

#include "optune/tuner/genetic_tuner.hpp"
#include "optune/tuner/grid_tuner.hpp"
#include "optune/tuner/random_tuner.hpp"
#include "optune/tuner/tuner.hpp"

namespace optune::tuner {

std::vector<std::string> tuner_names() { return {"random", "grid", "ga"}; }

void check_tuner_name(const std::string& name) {
  std::string known;
  for (const auto& n : tuner_names()) {
    if (n == name) return;
    known += (known.empty() ? "" : ", ") + n;
  }
  throw std::invalid_argument("unknown tuner '" + name + "' (expected " + known + ")");
}

std::unique_ptr<Tuner> make_tuner(const TunerOptions& options, const search_space::ConfigSpace& space,
                                  ConfigSet already_measured) {
  if (options.name == "random")
    return std::make_unique<RandomTuner>(space, options.seed, std::move(already_measured));
  if (options.name == "grid") return std::make_unique<GridTuner>(space, std::move(already_measured));
  if (options.name == "ga")
    return std::make_unique<GeneticTuner>(space, options.seed, std::move(already_measured));
  check_tuner_name(options.name);
  throw std::logic_error("tuner '" + options.name + "' is listed but not constructed");
}

}  // namespace optune::tuner
