// optune replay: runs tuners against an exhaustively measured landscape file (Kernel Tuner cache
// or T4 results) over many seeds, and prints how well each searched it (replay_summary.hpp).
// Nothing is measured: every evaluation is answered from the file.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "optune/tuner/landscape_file.hpp"
#include "optune/tuner/replay_summary.hpp"
#include "optune/tuner/tuning_loop.hpp"

namespace optune::cli {
namespace {

struct ReplayOptions {
  std::string landscape;
  std::string tuners = "xgb";  // comma-separated, or "all"
  std::size_t seeds = 20;
  std::string budgets = "25,50,100,200,400";
  std::size_t batch_size = 1;  // as Kernel Tuner evaluates
  std::vector<std::string> transfer_from;
  std::string format = "table";
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::vector<std::size_t> parse_budgets(const std::string& text) {
  std::vector<std::size_t> budgets;
  for (const auto& item : split_list(text)) {
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || value < 1 || value > 1000000)
      throw UsageError("replay: --budgets takes positive integers separated by commas (got '" + item + "')");
    budgets.push_back(static_cast<std::size_t>(value));
  }
  if (budgets.empty()) throw UsageError("replay: --budgets is empty");
  return budgets;
}

std::vector<std::string> parse_tuners(const std::string& text) {
  if (text == "all") return tuner::tuner_names();
  auto names = split_list(text);
  if (names.empty()) throw UsageError("replay: --tuner is empty");
  for (const auto& name : names) tuner::check_tuner_name(name);
  return names;
}

// Other devices' landscapes of the same kernel, as the records the model starts from.
tuner::TaskHistory transfer_history(const tuner::LandscapeFile& target, const std::vector<std::string>& files) {
  tuner::TaskHistory history;
  for (const auto& path : files) {
    auto source = tuner::read_landscape_file(path);
    const auto& ours = target.task->space.knobs();
    const auto& theirs = source.task->space.knobs();
    bool same_parameters = ours.size() == theirs.size();
    for (std::size_t k = 0; same_parameters && k < ours.size(); ++k)
      same_parameters = std::visit([](const auto& knob) { return knob.name; }, ours[k]) ==
                        std::visit([](const auto& knob) { return knob.name; }, theirs[k]);
    if (!same_parameters)
      throw UsageError("replay: --transfer-from " + path + " has other tunable parameters than " + target.name);
    if (source.device == target.device)
      throw UsageError("replay: --transfer-from " + path + " was measured on the same device (" + source.device + ")");
    for (auto& record : tuner::landscape_records(source)) history.other_devices.push_back(std::move(record));
  }
  return history;
}

struct TunerReport {
  std::string tuner;
  tuner::ReplaySummary summary;
  double seconds_per_decision = 0;  // the tuner's own time (model fits, ranking) per evaluation
  double wall_seconds_per_seed = 0;
};

TunerReport replay_tuner(const tuner::LandscapeFile& file, const tuner::Landscape& landscape,
                         const std::string& name, const ReplayOptions& options,
                         const std::vector<std::size_t>& budgets, const std::vector<double>& random_best,
                         const tuner::TaskHistory& history) {
  const std::size_t top = *std::max_element(budgets.begin(), budgets.end());
  std::vector<std::vector<double>> runs;
  double overhead = 0, evaluations = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t seed = 1; seed <= options.seeds; ++seed) {
    auto result = tuner::replay(landscape, name, seed, top, options.batch_size, landscape.best, history);
    std::vector<double> times;
    for (double throughput : result.evaluated) times.push_back(throughput > 0 ? 1.0 / throughput : std::nan(""));
    runs.push_back(std::move(times));
    overhead += result.overhead_seconds;
    evaluations += static_cast<double>(result.evaluated.size());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {name, tuner::summarise_replay(runs, file.optimum, random_best, budgets),
          evaluations > 0 ? overhead / evaluations : 0, wall / static_cast<double>(options.seeds)};
}

// The keys in the order.
nlohmann::ordered_json to_json(const tuner::LandscapeFile& file, const TunerReport& report, std::size_t seeds) {
  nlohmann::ordered_json evals_to = nlohmann::ordered_json::object();
  for (const char* target : {"0.9", "0.95", "0.99"}) {
    const auto& evals = report.summary.evals_to.at(target);
    evals_to[target] = evals ? nlohmann::ordered_json(*evals) : nlohmann::ordered_json(nullptr);
  }
  auto rounded = [](double value) { return std::round(value * 1e4) / 1e4; };
  nlohmann::ordered_json fraction = nlohmann::ordered_json::array();
  for (double value : report.summary.fraction) fraction.push_back(rounded(value));
  return {{"landscape", file.name}, {"tuner", report.tuner},       {"seeds", seeds},
          {"budgets", report.summary.budgets}, {"fraction", fraction}, {"evals_to", evals_to},
          {"score", rounded(report.summary.score)}};
}

void print_table_header(const tuner::LandscapeFile& file, const ReplayOptions& options,
                        const std::vector<std::size_t>& budgets) {
  std::printf("replay     %s: %s on %s, %zu configurations, optimum %.6g (replayed from the file: nothing is measured)\n",
              file.name.c_str(), file.kernel.c_str(), file.device.c_str(), file.configs.size(), file.optimum);
  std::printf("seeds      %zu, batches of %zu (optune tune measures batches of %zu)%s\n", options.seeds,
              options.batch_size, tuner::TuningOptions{}.batch_size,
              options.transfer_from.empty() ? "" : ", model warm-started from other devices' landscapes");
  std::printf("%-8s", "tuner");
  for (std::size_t budget : budgets) std::printf("  @%-5zu", budget);
  std::printf("  to90%%  to95%%  to99%%  score  ms/decision\n");
}

void print_table_row(const TunerReport& report) {
  std::printf("%-8s", report.tuner.c_str());
  for (double fraction : report.summary.fraction) std::printf("  %-6.3f", fraction);
  for (const char* target : {"0.9", "0.95", "0.99"}) {
    const auto& evals = report.summary.evals_to.at(target);
    if (evals) std::printf("  %5zu", *evals);
    else std::printf("  %5s", "-");
  }
  std::printf("  %5.3f  %.2f\n", report.summary.score, report.seconds_per_decision * 1e3);
}

int run_replay(const ReplayOptions& options) {
  if (options.landscape.empty()) throw UsageError("replay: --landscape is required");
  if (options.seeds < 1) throw UsageError("replay: --seeds must be at least 1");
  if (options.batch_size < 1) throw UsageError("replay: --batch-size must be at least 1");
  const auto budgets = parse_budgets(options.budgets);
  const auto tuners = parse_tuners(options.tuners);
  const auto file = tuner::read_landscape_file(options.landscape);
  const auto history = transfer_history(file, options.transfer_from);
  const auto landscape = tuner::replay_landscape(file);
  const std::size_t top = *std::max_element(budgets.begin(), budgets.end());
  if (top > file.configs.size())
    throw UsageError("replay: a budget of " + std::to_string(top) + " exceeds the landscape's " +
                     std::to_string(file.configs.size()) + " configurations");
  const auto random_best = tuner::random_search_expected_best(file.times, top);
  if (options.format == "table") print_table_header(file, options, budgets);
  for (const auto& name : tuners) {
    auto report = replay_tuner(file, landscape, name, options, budgets, random_best, history);
    if (options.format == "json") {
      std::printf("%s\n", to_json(file, report, options.seeds).dump().c_str());
    } else {
      print_table_row(report);
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

void add_replay_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* replay = app.add_subcommand(
      "replay", "Replay tuners against a measured landscape file (Kernel Tuner cache or T4 results); measures nothing");
  replay->add_option("--landscape", options->landscape, "Landscape file: .json, .json.gz (Kernel Tuner cache) or T4 results");
  replay->add_option("--tuner", options->tuners, "Tuners, comma-separated, or all")->capture_default_str();
  replay->add_option("--seeds", options->seeds, "Seeds per tuner (1..N)")->capture_default_str();
  replay->add_option("--budgets", options->budgets, "Unique evaluations to report at, comma-separated")->capture_default_str();
  replay->add_option("--batch-size", options->batch_size, "Configs per tuner decision (Kernel Tuner evaluates 1)")
      ->capture_default_str();
  replay->add_option("--transfer-from", options->transfer_from,
                     "Landscapes of the same kernel on other devices: the model starts from them");
  replay->add_option("--format", options->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  replay->callback([options, &action] { action = [options] { return run_replay(*options); }; });
}

}  // namespace optune::cli
