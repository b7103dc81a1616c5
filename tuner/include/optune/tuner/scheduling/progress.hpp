// Progress: the live display of a tuning run. On a terminal one line is redrawn in place
// (trial i/N, best throughput, failures, noisy records and the machine's load, elapsed, ETA);
// elsewhere (CI logs, files) a plain line per batch.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace optune::tuner {

// A trial count that bounds nothing: a run bounded by time alone.
inline constexpr std::size_t kUnboundedTrials = std::size_t{1} << 40;

struct ProgressState {
  std::string task;        // the task being tuned, shown when several share the run; "" for one
  std::size_t trial = 0;   // measured so far in this run
  std::size_t trials = 0;  // budget
  double budget_seconds = 0;  // a time budget, which the line then counts down instead (0: none)
  double best_gflops = 0;
  std::size_t failures = 0;
  std::string unit = "GFLOP/s";  // of best_gflops: a kernel file's may be GB/s or runs/s
  // Records of this run so far taken on a busy machine or with a wide spread (TuningRecord::is_noisy).
  std::size_t noisy = 0;
  // Candidates of this run cut as slow by the bail-out, and the timing seconds that it and
  // adaptive timing spared (TimeSplit::saved).
  std::size_t slow = 0;
  double saved_seconds = 0;
  // The last batch's mean load (other processes' share of the CPU time); nullopt where unknown.
  std::optional<double> load;
  // Its mean device load (other processes' share of the GPU's time); nullopt where unknown.
  std::optional<double> device_load;
  // The best is a first measurement, which the end of the run measures again (the summary's best
  // is the re-measured one); false where it is not re-measured (--remeasure 0).
  bool best_is_provisional = false;
};

class Progress {
 public:
  // `out` null: silent. `live`: redraw one line (a terminal).
  Progress(std::FILE* out, bool live);
  static Progress for_stderr();  // live when stderr is a terminal
  // Called with every update as well (a front end's own display, e.g. a Python callback); an
  // exception it throws stops the run.
  void set_observer(std::function<void(const ProgressState&)> observer) { observer_ = std::move(observer); }
  void start(const std::string& task, std::size_t trials);
  void update(const ProgressState& state);
  // A line of its own (the closing re-measurement's progress), below the redrawn one.
  void note(const std::string& line);
  void finish();

 private:
  std::FILE* out_;
  bool live_;
  std::chrono::steady_clock::time_point start_;
  bool drawn_ = false;
  std::function<void(const ProgressState&)> observer_;
};

std::string format_duration(double seconds);  // "42s", "3m05s", "1h02m"

}  // namespace optune::tuner
