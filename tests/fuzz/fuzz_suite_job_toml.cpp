// Suite and job files (TOML): what a user, or a file passed around a team, feeds `tune --suite`,
// `regress` and `job run`. Input: the file's text, parsed as a suite and as a job.
// Promises: only SuiteError / JobError come out (each a one-line message naming the file), and
// every workload of a parsed file is valid. A job naming a suite file is not followed: that reads
// the file system, which is not the input.
#include <cstdint>
#include <string>

#include <toml++/toml.h>

#include "fuzz_support.hpp"
#include "optune/tuner/jobs/job.hpp"
#include "optune/tuner/scheduling/suite.hpp"

using namespace optune;

namespace {

void check_entries(const tuner::Suite& suite, const char* what) {
  if (suite.entries.empty()) optune::fuzz::broken(std::string(what) + " parsed without workloads");
  for (const auto& entry : suite.entries) {
    try {
      kernels::validate_workload(entry.workload);
    } catch (const std::invalid_argument& error) {
      optune::fuzz::broken(std::string(what) + " parsed an invalid workload: " + error.what());
    }
  }
}

void check_one_line(const std::string& message) {
  if (message.empty() || message.find('\n') != std::string::npos)
    optune::fuzz::broken("an error message that is not one line: " + message);
}

bool names_a_suite_file(const std::string& text) {
  try {
    return toml::parse(text).contains("suite");
  } catch (const toml::parse_error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    check_entries(tuner::parse_suite(text, "fuzz.toml"), "a suite");
  } catch (const tuner::SuiteError& error) {
    check_one_line(error.what());
  }
  if (names_a_suite_file(text)) return 0;
  try {
    check_entries(tuner::parse_job(text, "fuzz-job.toml").suite, "a job");
  } catch (const tuner::JobError& error) {
    check_one_line(error.what());
  }
  return 0;
}
