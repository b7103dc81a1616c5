// bench_interleaved_truth: the quiet truth of a reported speed-up (tests/bench/trust_under_load.sh).
// Measures a workload's default config and one other config (a tuning run's reported best)
// through the real runner, interleaved for ROUNDS rounds (measure::Runner::run), and prints the
// speed-up default / config as the final comparison takes it: the median of the per-round ratios,
// with its interval, and the machine's mean load meanwhile (and the GPU's, where known).
//   bench_interleaved_truth BIN_DIR OP SHAPE CONFIG_JSON ROUNDS [TARGET]
// OP is an operator (gemm, conv2d, ...) or a kernel file (a path ending in .toml), SHAPE its shape
// (with `dtype=` where not f32), TARGET where it runs (default cpu). Prints one line:
// "truth 3.952 low 3.901 high 4.010 load 0.012 device_load 0.000" (device_load -1: unknown).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "optune/app/measuring.hpp"
#include "optune/app/tasks.hpp"
#include "optune/tuner/scheduling/final_comparison.hpp"

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr, "usage: bench_interleaved_truth BIN_DIR OP SHAPE CONFIG_JSON ROUNDS [TARGET]\n");
    return 2;
  }
  try {
    const std::string op = argv[2];
    const std::string target = argc == 7 ? argv[6] : "cpu";
    auto task = op.ends_with(".toml") ? optune::app::make_kernel_task(op, argv[3], target)
                                      : optune::app::make_task(op, argv[3], target);
    optune::app::MeasureSettings settings;
    settings.target = target;
    optune::app::Measuring measuring(settings, optune::app::install_paths_beside(argv[1], ""), std::nullopt);
    const auto default_config = task->kernel_template->default_config(task->workload, task->device, task->space);
    const std::vector<optune::measure::MeasureInput> inputs = {
        {task, default_config}, {task, task->space.from_json(nlohmann::json::parse(argv[4]))}};
    const auto builds = measuring.builder->build(inputs);
    const auto results = measuring.runner.run(inputs, builds, std::stoi(argv[5]));
    const auto ratio = optune::tuner::round_ratio(results[0], results[1]);
    if (!ratio) {
      std::fprintf(stderr, "a config failed: %s %s\n", results[0].message.c_str(), results[1].message.c_str());
      return 1;
    }
    const double load = (results[0].load.value_or(0) + results[1].load.value_or(0)) / 2;
    const double device_load = results[0].device_load && results[1].device_load
                                   ? (*results[0].device_load + *results[1].device_load) / 2
                                   : -1;
    std::printf("truth %.3f low %.3f high %.3f load %.3f device_load %.3f\n", ratio->value, ratio->low, ratio->high,
                load, device_load);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_interleaved_truth: %s\n", error.what());
    return 2;
  }
}
