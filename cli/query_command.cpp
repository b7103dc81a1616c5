// optune query: the best configs (or the whole history) recorded in the database, filtered by op,
// shape, target and device, as a table, JSON or CSV.
#include <cstdio>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "optune/app/query.hpp"
#include "optune/app/query_table.hpp"

namespace optune::cli {
namespace {

struct QueryOptions {
  std::string database = kDefaultDatabase;
  std::string op;
  std::string shape;
  std::string target;
  std::string device;
  std::string since;
  std::size_t top = 1;
  bool history = false;
  std::string format = "table";
};

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string optional_number(const std::optional<double>& value) {
  return value ? fmt::format("{:.4g}", *value) : "";
}

int run_query(const QueryOptions& options) {
  app::QueryRequest request{options.database, options.op, options.shape, options.target, options.device,
                            std::nullopt,       options.top, options.history};
  if (!options.since.empty()) request.since = app::parse_since(options.since);
  auto result = app::query_records(request);
  if (!result.passed_over.empty())
    std::fprintf(stderr, "optune: note: passed over %zu bad record%s (%s%s)\n", result.passed_over.size(),
                 result.passed_over.size() > 1 ? "s" : "", result.passed_over.front().c_str(),
                 result.passed_over.size() > 1 ? "; ..." : "");
  const auto& records = result.records;
  if (options.format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& record : records) {
      all.push_back(app::record_json(record));
      // Where the best two are tied within noise, the best says which config it is tied with.
      if (auto next = result.tied.find(record.id); next != result.tied.end()) all.back()["tied_with"] = next->second.config;
    }
    std::printf("%s\n", all.dump(2).c_str());
  } else if (options.format == "csv") {
    std::printf("workload,template,target,device,device_name,median_seconds,gflops,error_kind,tuner,timestamp,config,"
                "spread,load,device_load,noisy,build_seconds,check_seconds,timing_seconds,check_error\n");
    for (const auto& r : records)
      std::printf("%s\n", fmt::format("{},{},{},{},{},{:.9g},{:.4f},{},{},{:.0f},{},{},{},{},{},{:.4g},{},{},{}",
                                      r.workload_key, r.template_name, r.target, r.device_id,
                                      csv_field(r.device_fingerprint.value("name", "")), r.median_seconds,
                                      r.gflops, r.error_kind, r.tuner, r.timestamp, csv_field(r.config.dump()),
                                      optional_number(r.spread), optional_number(r.load),
                                      optional_number(r.device_load), r.is_noisy() ? 1 : 0, r.build_seconds,
                                      optional_number(r.check_seconds), optional_number(r.timing_seconds),
                                      optional_number(r.check_error))
                              .c_str());
  } else {
    std::fputs(app::query_table(result).c_str(), stdout);
  }
  return 0;
}

}  // namespace

void add_query_command(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<QueryOptions>();
  CLI::App* query = app.add_subcommand("query", "Show the best recorded configs, or the history of measurements");
  add_database_option(*query, options->database);
  query->add_option("--op", options->op, "Only this operator");
  query->add_option("--shape", options->shape, "Only this shape (needs --op)");
  add_dtype_option(*query, options->shape);
  query->add_option("--target", options->target, "Only this target (e.g. cpu)");
  query->add_option("--device", options->device, "Only this device: id or part of its name");
  add_since_option(*query, options->since);
  query->add_option("--top", options->top, "Best K configs per workload, target and device")
      ->capture_default_str()->check(whole_number(1, 1000000));
  query->add_flag("--history", options->history, "Every record, failures included, oldest first");
  query->add_option("--format", options->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  query->callback([options, &action] { action = [options] { return run_query(*options); }; });
}

}  // namespace optune::cli
