// JUnit XML, the test report CI servers read: one suite of test cases, each passed, failed (with
// the failure's type and message) or skipped. `regress` and `revalidate` write their verdicts in it,
// one test case per workload.
#pragma once

#include <string>
#include <vector>

namespace optune::tuner {

struct JUnitCase {
  enum class Outcome { kPassed, kFailed, kSkipped };
  std::string name;  // the workload key
  double seconds = 0;
  Outcome outcome = Outcome::kPassed;
  std::string failure_type;  // of a failure: "regression", "broken"
  std::string message;       // why it failed or was skipped
};

// `command` names the report ("optune regress") and the cases' class ("optune.regress.<suite>").
std::string junit_xml(const std::string& command, const std::string& suite_name, const std::vector<JUnitCase>& cases);

}  // namespace optune::tuner
