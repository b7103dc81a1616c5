#include "cli_support.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "measure_options.hpp"
#include "optune/app/output_text.hpp"

namespace optune::cli {
namespace fs = std::filesystem;
namespace {

// The name of the validators below; check_numeric_options() looks for it.
constexpr const char* kNumberCheck = "number";

bool has_number_check(CLI::Option& option) {
  try {
    option.get_validator(kNumberCheck);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

std::optional<std::int64_t> parse_whole_number(const std::string& text) {
  const bool negative = !text.empty() && text.front() == '-';
  const std::string digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  std::uint64_t magnitude = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;  // overflow
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (magnitude > kMax + (negative ? 1 : 0)) return std::nullopt;
  if (!negative) return static_cast<std::int64_t>(magnitude);
  return magnitude == kMax + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
}

std::optional<double> parse_finite_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// --bail-out: a factor, or "off" (0).
CLI::Validator bail_out_factor() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "off") {
          text = "0";
          return "";
        }
        const auto factor = parse_finite_number(text);
        if (factor && *factor >= measure::kMinBailOut && *factor <= measure::kMaxBailOut) return "";
        return fmt::format("must be 'off' or a factor from {:g} to {:g}, not '{}'", measure::kMinBailOut, measure::kMaxBailOut, text);
      },
      "FACTOR|off", kNumberCheck);
}

fs::path executable_dir() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::current_path() : self.parent_path();
}

}  // namespace

app::InstallPaths install_paths() {
  // OPTUNE_LOCK_DIR: another folder for the machine's run locks (tests keep theirs apart with it).
  const char* lock_dir = std::getenv("OPTUNE_LOCK_DIR");
  return app::install_paths_beside(executable_dir().string(), program_cache_dir(), lock_dir ? lock_dir : "");
}

std::function<void(const std::string&)> stderr_log() {
  return [](const std::string& line) { std::fprintf(stderr, "optune: %s\n", line.c_str()); };
}

std::string worker_path() {
  auto worker = install_paths().worker;
  if (fs::exists(worker)) return worker;
  throw std::runtime_error("optune-worker not found next to optune in " + executable_dir().string());
}

// The front end, not a library, reads the environment.
std::string program_cache_dir() {
  if (const char* dir = std::getenv("OPTUNE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "optune" / "programs").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "optune" / "programs").string();
  return (fs::temp_directory_path() / "optune-program-cache").string();
}

void add_database_option(CLI::App& command, std::string& database, const std::string& note) {
  command
      .add_option("--db", database,
                  "Database: a SQLite file, or a PostgreSQL server's libpq URI (postgresql://HOST/DB) or keyword string "
                  "(service=NAME); its password in ~/.pgpass or PGPASSFILE, never here" +
                      (note.empty() ? std::string() : " (" + note + ")"))
      ->capture_default_str();
}

void add_since_option(CLI::App& command, std::string& since) {
  command.add_option("--since", since, "Only records since a date (2026-11-22[T18:30]) or for a duration (12h, 7d)");
}

void add_layout_option(CLI::App& command, std::string& layout) {
  command.add_option("--layout", layout,
                     "With --suite: the activation layout the network keeps between conv layers (nchw, nchw4c, "
                     "nchw8c, nchw16c, nhwc), replacing the suite file's; layers that pin their own keep it");
}

void add_dtype_option(CLI::App& command, std::string& shape, std::string* suite_dtype) {
  command.add_option_function<std::string>(
      "--dtype",
      [&shape, suite_dtype](const std::string& dtype) {
        try {
          kernels::parse_data_type(dtype);
        } catch (const std::invalid_argument& error) {
          throw CLI::ValidationError("--dtype", error.what());
        }
        if (shape.empty() && suite_dtype != nullptr) {
          *suite_dtype = dtype;  // the command checks that a suite takes it
          return;
        }
        if (shape.empty()) throw CLI::ValidationError("--dtype", "goes with --shape");
        shape += ",dtype=" + dtype;
      },
      std::string("The operands' type: f32 (default), f16, bf16 (float32 accumulation), i8 (int32 accumulation "
                  "and output), u7 (i8 with activations in 0..127) or e4m3; same as the shape's dtype= item") +
          (suite_dtype != nullptr ? "; with --suite, of every workload that names none (the file's dtype replaced)"
                                  : ""));
}

void add_wait_lock_option(CLI::App& command, bool& wait) {
  command.add_flag("--wait-lock", wait,
                   "When another run on this machine measures on the device (whatever its database), wait for it "
                   "instead of exiting 1");
}

void add_timing_options(CLI::App& command, MeasureSettings& measuring, const std::string& what) {
  command.add_option("--repeat", measuring.timing.repeat, "Timed repeats per " + what)
      ->capture_default_str()->check(whole_number(1, 1000));
  command.add_option("--number", measuring.timing.number, "Runs per repeat (0: from --min-repeat-ms)")
      ->capture_default_str()->check(whole_number(0, 1000000));
  command.add_option("--min-repeat-ms", measuring.min_repeat_ms,
                     "A repeat's length, in milliseconds: the whole number of runs nearest to it, at least one (default: "
                     "40; 5 for CUDA, whose events time the device alone; the finalists' comparison 40 on CUDA, timed as "
                     "sustained as the peers)")
      ->check(finite_number(0.0, 60000.0));
  command.add_option("--bail-out", measuring.timing.bail_out,
                     "Stop timing a " + what + " whose first runs exceed this many times the best so far, recording "
                     "it as slow (off: time every one in full; never the default, the first batch or finalists)")
      ->capture_default_str()->transform(bail_out_factor());
  command.add_option("--timing", measuring.timing.adaptive,
                     "adaptive: stop timing a " + what + " once it is clearly slower than the best (1.5x after 1 "
                     "repeat, 1.3x after 2, 1.15x after 3) or its first 3 repeats agree within 2%; full: every repeat")
      ->transform(CLI::CheckedTransformer(std::map<std::string, bool>{{"adaptive", true}, {"full", false}}))
      ->default_str("adaptive");
  command.add_option("--timeout", measuring.timing.timeout_seconds, "Seconds a " + what + " may run (check and timing)")
      ->capture_default_str()->check(finite_number(0.1, 86400.0));
  command.add_option("--compile-timeout", measuring.build.compile_timeout, "Seconds a compile may take")
      ->capture_default_str()->check(finite_number(1.0, 86400.0));
  command.add_option("--jobs", measuring.build.jobs, "Parallel compiles (0: all cores)")
      ->capture_default_str()->check(whole_number(0, 4096));
  command.add_option("--compiler", measuring.build.compiler, "C++ compiler for CPU " + what + "s")->capture_default_str();
}

std::string milliseconds(const std::optional<measure::MeasureResult>& result) {
  if (!result) return "-";
  return result->ok() ? fmt::format("{:.4f}", result->median_seconds * 1e3)
                      : std::string(measure::error_kind_name(result->error));
}

std::string ratio(const std::optional<measure::MeasureResult>& now, std::optional<double> reference) {
  if (!now || !now->ok() || !reference) return "-";
  return app::speedup_text(*reference, now->median_seconds);
}


CLI::Validator whole_number(std::int64_t low, std::int64_t high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        auto value = parse_whole_number(text);
        if (value && *value >= low && *value <= high) {
          text = std::to_string(*value);  // CLI11 would read "010" as octal
          return "";
        }
        if (high == std::numeric_limits<std::int64_t>::max())
          return "must be a whole number of at least " + std::to_string(low) + ", not '" + text + "'";
        return "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high) + ", not '" +
               text + "'";
      },
      high == std::numeric_limits<std::int64_t>::max() ? "" : fmt::format("in [{} - {}]", low, high), kNumberCheck);
}

CLI::Validator finite_number(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        auto value = parse_finite_number(text);
        if (value && *value >= low && *value <= high) return "";
        if (high == std::numeric_limits<double>::max()) return "must be a finite number, not '" + text + "'";
        return fmt::format("must be a number from {} to {}, not '{}'", low, high, text);
      },
      high == std::numeric_limits<double>::max() ? "" : fmt::format("in [{} - {}]", low, high), kNumberCheck);
}

void check_numeric_options(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (has_number_check(*option)) continue;  // a range of its own
    const std::string type = option->get_type_name();
    if (type.rfind("UINT", 0) == 0) option->check(whole_number(0, std::numeric_limits<std::int64_t>::max()));
    else if (type.rfind("INT", 0) == 0)
      option->check(whole_number(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()));
    else if (type.rfind("FLOAT", 0) == 0)
      option->check(finite_number(std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_numeric_options(*sub);
}

void refuse_output_over_database(const std::string& command, const std::string& out, const std::string& database) {
  std::error_code error;
  if (std::filesystem::equivalent(out, database, error))
    throw UsageError(command + ": --out " + out + " is the database " + database + " itself");
}

}  // namespace optune::cli
