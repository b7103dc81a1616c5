// optune replay: runs tuners against an exhaustively measured landscape file (Kernel Tuner cache
// or T4 results) over many seeds, and prints how well each searched it (replay_summary.hpp).
// Nothing is measured: every evaluation is answered from the file.
#include <cstdio>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "optune/app/replay.hpp"
#include "optune/app/output_text.hpp"

namespace optune::cli {
namespace {

struct ReplayOptions {
  std::string landscape;
  std::string tuners = "xgb";  // comma-separated, or "all"
  std::size_t seeds = 20;
  std::size_t first_seed = 1;
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


// Which of the tuners the --transfer-from landscapes reach: only a tuner with a model reads them.
std::string transfer_note(const std::vector<std::string>& tuners) {
  std::vector<std::string> readers, others;
  for (const auto& name : tuners) (tuner::reads_transfer_records(name) ? readers : others).push_back(name);
  std::string note = ", other devices' landscapes warm-start the model of ";
  note += readers.empty() ? std::string("none of these tuners") : fmt::format("{}", fmt::join(readers, ", "));
  if (!others.empty()) note += fmt::format(" (not read by {})", fmt::join(others, ", "));
  return note;
}

void print_table_header(const tuner::LandscapeFile& file, const ReplayOptions& options,
                        const app::ReplayRequest& request) {
  std::printf("replay     %s: %s on %s, %s, optimum %.6g (replayed from the file: nothing is measured)\n",
              file.name.c_str(), file.kernel.c_str(), file.device.c_str(),
              app::counted(file.configs.size(), "configuration").c_str(), file.optimum);
  std::printf("seeds      %zu from %zu, batches of %zu (optune tune measures batches of %zu)%s\n", options.seeds,
              options.first_seed, options.batch_size, tuner::TuningOptions{}.batch_size,
              options.transfer_from.empty() ? "" : transfer_note(app::replay_tuners(request.tuners)).c_str());
  std::printf("%-8s", "tuner");
  for (std::size_t budget : request.budgets) std::printf("  @%-5zu", budget);
  std::printf("  to90%%  to95%%  to99%%  score  ms/decision\n");
}

void print_table_row(const app::TunerReport& report) {
  std::printf("%-8s", report.tuner.c_str());
  for (double fraction : report.summary.fraction) std::printf("  %-6.3f", fraction);
  for (const char* target : {"0.9", "0.95", "0.99"}) {
    const auto& evals = report.summary.evals_to.at(target);
    if (evals) std::printf("  %5zu", *evals);
    else std::printf("  %5s", "-");
  }
  if (report.summary.score) std::printf("  %5.3f", *report.summary.score);
  else std::printf("  %5s", "-");
  std::printf("  %.2f\n", report.seconds_per_decision * 1e3);
}

int run_replay(const ReplayOptions& options) {
  app::ReplayRequest request{options.landscape, split_list(options.tuners), options.seeds,
                             parse_budgets(options.budgets), options.batch_size, options.transfer_from,
                             options.first_seed};
  bool first = true;
  app::replay_landscape(request, [&](const tuner::LandscapeFile& file, const app::TunerReport& report) {
    if (options.format == "json") {
      // A file name need not be UTF-8 (JSON text must be): its odd bytes print as U+FFFD.
      const auto line = app::replay_json(file, report, options.seeds)
                            .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      std::printf("%s\n", line.c_str());
    } else {
      if (first) print_table_header(file, options, request);
      print_table_row(report);
    }
    first = false;
    std::fflush(stdout);
  });
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
  replay->add_option("--first-seed", options->first_seed, "First seed: seeds run from it (another set shows the spread)")
      ->capture_default_str();
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
