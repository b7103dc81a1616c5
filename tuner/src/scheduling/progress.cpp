#include "optune/tuner/scheduling/progress.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "optune/db/tuning_record.hpp"

namespace optune::tuner {

Progress::Progress(std::FILE* out, bool live) : out_(out), live_(live) {}

Progress Progress::for_stderr() { return Progress(stderr, isatty(fileno(stderr)) == 1); }

std::string format_duration(double seconds) {
  auto s = static_cast<long long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

void Progress::start(const std::string& task, std::size_t trials) {
  start_ = std::chrono::steady_clock::now();
  drawn_ = false;
  if (out_) std::fprintf(out_, "tuning %s: %zu trials\n", task.c_str(), trials);
}

void Progress::update(const ProgressState& state) {
  if (observer_) observer_(state);
  if (!out_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = state.trial ? elapsed / state.trial * (state.trials - state.trial) : 0;
  if (state.budget_seconds > 0) eta = std::min(eta, std::max(0.0, state.budget_seconds - elapsed));
  std::string task = state.task.empty() ? "" : "[" + state.task + "] ";
  const std::string of = state.budget_seconds > 0 && state.trials >= kUnboundedTrials ? "" : fmt::format("/{}", state.trials);
  std::string line = fmt::format("{}trial {}{}  best {:.1f} {}{}  failed {}", task, state.trial, of,
                                 state.best_gflops, state.unit,
                                 state.best_is_provisional ? " (re-measured at the end)" : "", state.failures);
  // Noise is said where it happens, not only in the summary.
  if (state.noisy) line += fmt::format("  noisy {}", state.noisy);
  if (state.slow) line += fmt::format("  slow {}", state.slow);
  if (state.saved_seconds >= 1) line += "  saved " + format_duration(state.saved_seconds);
  if (db::is_busy(state.load, state.device_load))
    line += "  machine busy (" + db::busy_text(state.load, state.device_load) + ")";
  line += fmt::format("  elapsed {}  eta {}", format_duration(elapsed), format_duration(eta));
  if (live_) {
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    drawn_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void Progress::note(const std::string& line) {
  if (!out_) return;
  if (live_ && drawn_) std::fprintf(out_, "\n");
  drawn_ = false;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::finish() {
  if (out_ && live_ && drawn_) std::fprintf(out_, "\n");
}

}  // namespace optune::tuner
