// The CI gate (`optune regress`, Python's optune.regress): per workload of a suite, the tuned config
// (best recorded for the target's device) and the template's default config measured now, compared
// with each other and with the recorded figure (tuner/results/regression.hpp). The database is
// only read: a CI check leaves the tuning records as they were.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "optune/app/install_paths.hpp"
#include "optune/app/measuring.hpp"
#include "optune/app/tuning.hpp"
#include "optune/tuner/results/regression.hpp"

namespace optune::app {

struct RegressRequest {
  std::string database = kDefaultDatabase;
  std::string suite;
  std::string layout;       // replaces the suite's kept layout ("" keeps it)
  double tolerance = 0.05;  // allowed slowdown, as a share
  int attempts = 3;         // measurements of a workload before a regression is called
  std::string junit;        // "": no JUnit XML
  bool wait_lock = false;
  MeasureSettings measuring;
};

struct RegressCase {
  tuner::RegressionCase measured;
  tuner::Judgement judgement;
};

struct RegressOutcome {
  std::string suite;  // its name
  std::vector<RegressCase> cases;
  std::size_t regressions = 0;
  std::size_t untuned = 0;
};

// Measures every workload in the suite's order, telling `on_case` of each as it is judged; writes
// request.junit where given. BadInput for a malformed suite, database or target, or an unwritable
// JUnit file; `log` takes the waiting line and the RPC runner's lines.
RegressOutcome regress(const RegressRequest& request, const InstallPaths& paths,
                       const std::function<void(const RegressCase&)>& on_case = nullptr,
                       std::function<void(const std::string&)> log = nullptr);

}  // namespace optune::app
