// Progress: the live display of a tuning run. On a terminal one line is redrawn in place
// (trial i/N, best throughput, elapsed, ETA); elsewhere (CI logs, files) a plain line per batch.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

namespace optune::tuner {

struct ProgressState {
  std::string task;        // the task being tuned, shown when several share the run; "" for one
  std::size_t trial = 0;   // measured so far in this run
  std::size_t trials = 0;  // budget
  double best_gflops = 0;
  std::size_t failures = 0;
  std::string unit = "GFLOP/s";  // of best_gflops: a kernel file's may be GB/s or runs/s
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
