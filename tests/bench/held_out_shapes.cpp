// bench_held_out_shapes: for shapes never tuned inside a tuned range (issue 22 item 4), the config
// `optune pick` gives them (`nearest`: ranked by the cost model, from the range's database)
// against each shape's own tuned best (from a second database where every held-out shape was
// tuned on its own), against the template's default config, and against the baseline of taking
// the closest tuned shape's best config without the model. The four are measured interleaved in
// the same rounds (measure::Runner::run), so that a slow spell of this shared machine falls on all
// of them alike. Prints one row per shape and the medians of the ratios. Run by
// tests/bench/held_out_shapes.sh:
//   bench_held_out_shapes BIN_DIR RANGE_DB OWN_DB ROUNDS SHAPE...
// The target is cpu, or OPTUNE_BENCH_TARGET's (opencl on a GPU machine).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "optune/app/measuring.hpp"
#include "optune/app/pick.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/results/nearest_config.hpp"

namespace {

using optune::app::Pick;
using optune::app::PickSource;

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n == 0 ? 0 : n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string bench_target() {
  const char* target = std::getenv("OPTUNE_BENCH_TARGET");
  return target != nullptr && *target != '\0' ? target : "cpu";
}

// Where compiled device programs are kept between runs: as the optune command keeps them under
// XDG_CACHE_HOME, else nowhere.
std::string program_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  return xdg != nullptr && *xdg != '\0' ? std::string(xdg) + "/optune/programs" : "";
}

Pick pick_from(const std::string& database, const std::string& shape) {
  return optune::app::pick_config({database, "gemm", shape, bench_target(), ""});
}

// The ratios of one kind of config over the shapes.
struct Column {
  std::vector<double> over_own;
  std::size_t within_10_percent = 0, beats_default = 0;
  void add(double ms, double own_ms, double default_ms) {
    over_own.push_back(ms / own_ms);
    within_10_percent += ms <= 1.10 * own_ms;
    beats_default += ms < default_ms;
  }
  void print(const char* name) const {
    std::printf("%-14s within 10%% of own best on %zu of %zu, faster than default on %zu; median %.3fx of own, worst %.3fx\n",
                name, within_10_percent, over_own.size(), beats_default, median_of(over_own),
                over_own.empty() ? 0.0 : *std::max_element(over_own.begin(), over_own.end()));
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: bench_held_out_shapes BIN_DIR RANGE_DB OWN_DB ROUNDS SHAPE...\n");
    return 2;
  }
  const std::string range_db = argv[2], own_db = argv[3];
  const int rounds = std::stoi(argv[4]);
  optune::app::MeasureSettings settings;
  settings.target = bench_target();
  settings.timing.repeat = 5;
  settings.timing.min_repeat_ms = 50;
  optune::app::Measuring measuring(settings, optune::app::install_paths_beside(argv[1], program_cache_dir()), std::nullopt);
  const auto range = optune::db::Database::open(range_db, optune::db::Database::Mode::kReadOnly);

  Column picked_column, closest_column;
  std::vector<double> default_over_picked;
  std::printf("%-12s %-24s %-24s %10s %10s %10s %10s %11s %11s %10s\n", "shape", "picked from", "closest from",
              "default ms", "picked ms", "closest ms", "own ms", "picked/own", "closest/own", "def/picked");
  for (int i = 5; i < argc; ++i) {
    const std::string shape = argv[i];
    auto task = optune::app::make_task("gemm", shape, bench_target());
    const Pick picked = pick_from(range_db, shape);
    const Pick own = pick_from(own_db, shape);
    const auto closest = optune::tuner::nearest_config(range, task->workload, task->target, task->device,
                                                       optune::tuner::NearestRanking::kClosestShape);
    if (picked.source != PickSource::kNearest || own.source != PickSource::kTuned || !closest) {
      std::fprintf(stderr, "%s: picked is %s, own is %s: skipped\n", shape.c_str(),
                   std::string(optune::app::pick_source_name(picked.source)).c_str(),
                   std::string(optune::app::pick_source_name(own.source)).c_str());
      continue;
    }
    const auto default_config = task->kernel_template->default_config(task->workload, task->device, task->space);
    std::vector<optune::measure::MeasureInput> inputs = {{task, default_config},
                                                         {task, task->space.from_json(picked.config)},
                                                         {task, task->space.from_json(closest->space.to_json(closest->config))},
                                                         {task, task->space.from_json(own.config)}};
    const auto builds = measuring.builder->build(inputs);
    const auto results = measuring.runner.run(inputs, builds, rounds);
    bool every_config_ran = true;
    for (std::size_t c = 0; c < results.size(); ++c) {
      if (results[c].ok()) continue;
      static const char* names[] = {"default", "picked", "closest", "own"};
      std::fprintf(stderr, "%s: the %s config failed (%s): %s\n", shape.c_str(), names[c],
                   std::string(optune::measure::error_kind_name(results[c].error)).c_str(),
                   results[c].message.substr(0, 300).c_str());
      every_config_ran = false;
    }
    if (!every_config_ran) continue;
    const double default_ms = results[0].median_seconds * 1e3, picked_ms = results[1].median_seconds * 1e3,
                 closest_ms = results[2].median_seconds * 1e3, own_ms = results[3].median_seconds * 1e3;
    picked_column.add(picked_ms, own_ms, default_ms);
    closest_column.add(closest_ms, own_ms, default_ms);
    default_over_picked.push_back(default_ms / picked_ms);
    std::printf("%-12s %-24s %-24s %10.4f %10.4f %10.4f %10.4f %10.2fx %10.2fx %9.2fx\n", shape.c_str(),
                picked.record->workload_key.c_str(), closest->source.workload_key.c_str(), default_ms, picked_ms,
                closest_ms, own_ms, picked_ms / own_ms, closest_ms / own_ms, default_ms / picked_ms);
    std::fflush(stdout);
  }
  std::printf("\n");
  picked_column.print("picked (model)");
  closest_column.print("closest shape");
  std::printf("median default/picked %.2fx\n", median_of(default_over_picked));
  return 0;
}
