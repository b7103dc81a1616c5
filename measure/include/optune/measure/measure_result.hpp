// What measuring one candidate produced (DESIGN.md's measure result). A candidate that fails to
// build, crashes, hangs or computes a wrong answer is a result with an error kind, never an
// exception: the tuner records it and goes on. A failure of the measuring environment is no
// candidate's result: it is an EnvironmentFailure.
#pragma once

#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace optune::measure {

// kReferenceError: a kernel file's check reference crashed, hung or failed, so no candidate of the
// problem can be checked; the tuner stops on it (the file is at fault, not the candidate).
// kSlow: the candidate passed its check, but its first timed runs were already over the bail-out
// factor times the task's best (TimingPolicy::bail_out), so its timing stopped there: its costs
// are those runs, and its median a lower bound on its time (it is at least that slow).
enum class ErrorKind { kOk, kBuildError, kRuntimeError, kTimeout, kWrongAnswer, kCrash, kTransportError, kReferenceError, kSlow };

// The measuring environment failed, not a candidate: a compiler that is missing, a worker that
// cannot start, a build folder that cannot be written (a full or read-only TMPDIR), a compiler
// that fails without a word. That is the run's failure: the batch is not recorded (its configs
// would be skipped by later runs as known failures) and the run stops; the command exits 1 with
// this message. Thrown by builders and runners where one candidate shows it, and by the tuning
// session where a whole batch does (tuner::TaskSession::check_environment).
class EnvironmentFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string_view error_kind_name(ErrorKind kind);  // "ok", "build_error", ...
ErrorKind parse_error_kind(std::string_view name);  // throws std::invalid_argument
std::string seconds_text(double seconds);  // "30 s", "0.5 s": a limit as messages give it

struct BuildResult {
  std::string artifact;  // path of the built shared object; empty on failure
  ErrorKind error = ErrorKind::kOk;
  std::string message;   // compiler output on failure (tail)
  double build_seconds = 0;
  // The builder keeps the artifact to serve later candidates that compile to the same object
  // (LocalBuilder): the runner leaves it in place.
  bool kept = false;
  bool ok() const { return error == ErrorKind::kOk; }
};

struct MeasureResult {
  std::vector<double> costs;  // seconds per run, one per repeat
  double median_seconds = 0;  // of costs; for kSlow a lower bound on the candidate's time
  double gflops = 0;          // for kSlow an upper bound
  ErrorKind error = ErrorKind::kOk;
  std::string message;
  double build_seconds = 0;
  // Where the worker's time went: checking the output against the reference (its run included),
  // and timing (warm-up and timed runs), summed over rounds; nullopt where the worker did not say.
  std::optional<double> check_seconds;
  std::optional<double> timing_seconds;
  // How far the output was from the reference, as the check measured it (ok, slow and wrong_answer
  // results): for a built-in operator the relative L2 error against the float64 reference (f32
  // passes at <= 1e-4, kernels::check_tolerance); for a kernel file the worst element's error in
  // units of its tolerance, |out - ref| / (atol + rtol |ref|) (<= 1 passes; 0 for outputs checked
  // only as written by two runs). The largest over rounds. nullopt where no check ran (a build or
  // runtime error, a crash, a timeout) or its error was not finite (NaN in the output, a write past
  // its end: the worker's -1).
  std::optional<double> check_error;
  // The timed runs a bail-out or an early settled ranking spared, in seconds (what the fixed
  // repeat x number would have cost beyond what ran).
  double saved_seconds = 0;
  double timestamp = 0;  // unix seconds at the end of the measurement
  // Share of the machine's CPU time that other processes took while it ran (machine_load.hpp),
  // averaged over its rounds; nullopt where unknown.
  std::optional<double> load;
  // Share of the device's time that other processes' work took while it was timed (a GPU shared
  // with another process: WorkerBackend::device_load_since), averaged likewise; nullopt where
  // unknown, and for CPU targets, whose share is `load`.
  std::optional<double> device_load;
  // The median of each round's costs, in round order (Runner::run): the final comparison of
  // finalists pairs them round by round.
  std::vector<double> round_medians;
  bool ok() const { return error == ErrorKind::kOk; }
  bool is_slow() const { return error == ErrorKind::kSlow; }
};

double median(std::vector<double> values);
double unix_now();

}  // namespace optune::measure
