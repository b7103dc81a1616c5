#include "optune/tuner/results/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "optune/tuner/search/record_check.hpp"

namespace optune::tuner {
namespace {

// Colours of the runs' lines, cycled (Tableau 10, readable on white).
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string date_text(double unix_seconds) {
  std::time_t time = static_cast<std::time_t>(unix_seconds);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", std::localtime(&time));
  return text;
}

// One tuning run of a task: best GFLOP/s so far after each trial (failures count as trials).
struct RunCurve {
  std::string run_id;
  std::string tuner;
  double started = 0;
  std::vector<double> best_so_far;
};

struct TaskRecords {
  db::TaskKey key;
  std::string device_name;
  std::vector<db::TuningRecord> records;  // oldest first
};

std::vector<RunCurve> run_curves(const TaskRecords& task) {
  std::vector<RunCurve> curves;
  std::map<std::string, std::size_t> index;
  for (const auto& record : task.records) {
    if (record.is_remeasurement()) continue;  // not a trial: the same configs timed again
    auto [it, added] = index.emplace(record.run_id, curves.size());
    if (added) curves.push_back({record.run_id, "", record.timestamp, {}});
    RunCurve& curve = curves[it->second];
    if (!record.is_default) curve.tuner = record.tuner;
    double previous = curve.best_so_far.empty() ? 0 : curve.best_so_far.back();
    curve.best_so_far.push_back(std::max(previous, record.ok() ? record.gflops : 0.0));
  }
  return curves;
}

// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at least `value`.
double nice_ceiling(double value) {
  if (value <= 0) return 1;
  double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : {1.0, 2.0, 5.0, 10.0})
    if (step * power >= value) return step * power;
  return 10 * power;
}

std::string svg_plot(const std::vector<RunCurve>& curves) {
  constexpr double kWidth = 640, kHeight = 280, kLeft = 56, kRight = 16, kTop = 12, kBottom = 40;
  std::size_t trials = 1;
  double top = 0;
  for (const auto& curve : curves) {
    trials = std::max(trials, curve.best_so_far.size());
    if (!curve.best_so_far.empty()) top = std::max(top, curve.best_so_far.back());
  }
  top = nice_ceiling(top);
  const double plot_width = kWidth - kLeft - kRight, plot_height = kHeight - kTop - kBottom;
  auto x = [&](double trial) { return kLeft + plot_width * (trials > 1 ? (trial - 1) / (trials - 1) : 0.5); };
  auto y = [&](double gflops) { return kTop + plot_height * (1 - gflops / top); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, kHeight);
  for (int tick = 0; tick <= 4; ++tick) {
    double value = top * tick / 4;
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n",
        kLeft, y(value), kWidth - kRight, y(value), kLeft - 6, y(value) + 4, value);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">trial (1 to {})</text>\n",
                     kLeft + plot_width / 2, kHeight - 8, trials);
  svg += fmt::format(
      "<text x=\"12\" y=\"{:.1f}\" transform=\"rotate(-90 12 {:.1f})\" text-anchor=\"middle\">"
      "best GFLOP/s</text>\n",
      kTop + plot_height / 2, kTop + plot_height / 2);
  for (std::size_t i = 0; i < curves.size(); ++i) {
    std::string points;
    for (std::size_t t = 0; t < curves[i].best_so_far.size(); ++t)
      points += fmt::format("{:.1f},{:.1f} ", x(t + 1.0), y(curves[i].best_so_far[t]));
    svg += fmt::format(
        "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"{}\" points=\"{}\"><title>{}</title>"
        "</polyline>\n",
        kColours[i % std::size(kColours)], points, escaped(curves[i].run_id));
  }
  return svg + "</svg>\n";
}

std::string legend(const std::vector<RunCurve>& curves) {
  std::string html = "<ul class=\"legend\">";
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const auto& curve = curves[i];
    html += fmt::format(
        "<li><span style=\"background:{}\"></span>run {} ({}, started {}): {} trials, best {:.2f} "
        "GFLOP/s</li>",
        kColours[i % std::size(kColours)], escaped(curve.run_id),
        escaped(curve.tuner.empty() ? "default only" : curve.tuner), date_text(curve.started), curve.best_so_far.size(),
        curve.best_so_far.empty() ? 0 : curve.best_so_far.back());
  }
  return html + "</ul>\n";
}

// The task's default and best records, each config counted with its latest successful record
// (Database::best()'s rule): the default config's latest measurement, re-measurements included,
// and the fastest config by its latest measurement.
std::pair<const db::TuningRecord*, const db::TuningRecord*> default_and_best(const TaskRecords& task) {
  std::map<std::string, const db::TuningRecord*> latest;  // config_text() -> its latest success
  std::string default_config;
  for (const auto& record : task.records) {  // oldest first
    if (record.is_default) default_config = record.config_text();
    if (record.ok()) latest[record.config_text()] = &record;
  }
  const db::TuningRecord* best = nullptr;
  for (const auto& [config, record] : latest)
    if (!best || record->median_seconds < best->median_seconds) best = record;
  auto found = latest.find(default_config);
  return {found == latest.end() ? nullptr : found->second, best};
}

std::string summary_table(const std::vector<TaskRecords>& tasks) {
  std::string html =
      "<table>\n<tr><th>workload</th><th>template</th><th>target</th><th>device</th><th>records</th>"
      "<th>default ms</th><th>default GFLOP/s</th><th>tuned ms</th><th>tuned GFLOP/s</th><th>speed-up</th>"
      "<th>tuned config</th></tr>\n";
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& task = tasks[i];
    auto [default_record, best] = default_and_best(task);
    auto ms = [](const db::TuningRecord* r) { return r ? fmt::format("{:.4f}", r->median_seconds * 1e3) : "-"; };
    auto gflops = [](const db::TuningRecord* r) { return r ? fmt::format("{:.2f}", r->gflops) : "-"; };
    std::string speedup = "-";
    if (default_record == best && best) speedup = "default";
    else if (default_record && best) speedup = fmt::format("{:.2f}x", default_record->median_seconds / best->median_seconds);
    html += fmt::format(
        "<tr><td><a href=\"#task{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>\n",
        i, escaped(task.key.workload_key), escaped(task.key.template_name), escaped(task.key.target),
        escaped(task.device_name), task.records.size(), ms(default_record), gflops(default_record), ms(best),
        gflops(best), speedup, best ? escaped(best->config.dump()) : "-");
  }
  return html + "</table>\n";
}

std::string cell_ratio(const nlohmann::json& seconds, double best) {
  return seconds.is_number() && best > 0 ? fmt::format("{:.3f}", seconds.get<double>() / best) : "-";
}

// One measured dispatch (optune dispatch): its leaves, the configs x shapes matrix it was fitted
// to (each cell time over the shape's best; * marks the configs the cover kept) and its held-out
// checks, as the stored rule keeps them.
std::string dispatch_section(const db::DispatchRecord& dispatch) {
  const auto& rule = dispatch.rule;
  std::string html = fmt::format("<h2>Dispatch {}: {} <small>({}, {}, {})</small></h2>\n", dispatch.id,
                                 escaped(rule.value("range", dispatch.low_key + " .. " + dispatch.high_key)),
                                 escaped(dispatch.template_name), escaped(dispatch.target), escaped(dispatch.device_id));
  const auto shapes = rule.value("shapes", nlohmann::json::array());
  const auto matrix = rule.value("matrix", nlohmann::json::array());
  const auto chosen = rule.value("chosen", nlohmann::json::array());
  html += "<table>\n<tr><th>leaf</th><th>config</th><th>tuned for</th></tr>\n";
  for (const auto& leaf : rule.value("leaves", nlohmann::json::array())) {
    const auto index = leaf.value("config", std::size_t{0});
    const auto configs = rule.value("configs", nlohmann::json::array());
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", escaped(leaf.value("name", "")), index,
                        index < configs.size() ? escaped(configs[index].value("from", "")) : "-");
  }
  html += "</table>\n<p>Each finalist's time over the shape's best (- did not run); * the configs kept.</p>\n<table>\n"
          "<tr><th>finalist</th>";
  for (const auto& shape : shapes) html += "<th>" + escaped(shape.is_string() ? shape.get<std::string>() : "") + "</th>";
  html += "</tr>\n";
  std::vector<double> best(shapes.size(), 0);
  for (const auto& row : matrix)
    for (std::size_t s = 0; s < best.size() && row.is_array() && s < row.size(); ++s)
      if (row[s].is_number() && (best[s] == 0 || row[s].get<double>() < best[s])) best[s] = row[s].get<double>();
  for (std::size_t f = 0; f < matrix.size(); ++f) {
    const bool kept = std::find(chosen.begin(), chosen.end(), nlohmann::json(f)) != chosen.end();
    html += fmt::format("<tr><td>{}{}</td>", f, kept ? "*" : "");
    for (std::size_t s = 0; s < best.size(); ++s)
      html += "<td>" + (matrix[f].is_array() && s < matrix[f].size() ? cell_ratio(matrix[f][s], best[s]) : "-") + "</td>";
    html += "</tr>\n";
  }
  html += "</table>\n<p>Held-out shapes: time over their own tuned best.</p>\n<table>\n"
          "<tr><th>workload</th><th>leaf</th><th>rule</th><th>nearest</th></tr>\n";
  for (const auto& check : rule.value("held_out", nlohmann::json::array())) {
    const double own = check.value("own_best", nlohmann::json()).is_number() ? check["own_best"].get<double>() : 0;
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escaped(check.value("workload", "")),
                        escaped(check.value("leaf", "")), cell_ratio(check.value("rule", nlohmann::json()), own),
                        cell_ratio(check.value("nearest", nlohmann::json()), own));
  }
  return html + "</table>\n";
}

}  // namespace

std::string html_report(const db::Database& database, const std::string& source) {
  std::map<std::string, TaskRecords> by_task;  // ordered by workload, template, target, device
  // A forged or damaged record (a negative or impossible time) would be a task's "best" and its
  // speed-up: it is passed over and counted, as query and apply-best pass it over.
  RecordCheck check;
  std::size_t passed_over = 0;
  for (auto& record : database.records(db::RecordFilter{})) {
    try {
      check.figures(record);
    } catch (const std::invalid_argument&) {
      ++passed_over;
      continue;
    }
    std::string id = record.workload_key + '\n' + record.template_name + '\n' + record.target + '\n' + record.device_id;
    auto& task = by_task[id];
    if (task.records.empty()) {
      task.key = {record.workload_key, record.template_name, record.target, record.device_id};
      task.device_name = record.device_fingerprint.value("name", record.device_id);
    }
    task.records.push_back(std::move(record));
  }
  std::vector<TaskRecords> tasks;
  for (auto& [id, task] : by_task) tasks.push_back(std::move(task));

  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>optune report: {0}</title>\n"
      "<style>body{{font-family:sans-serif;margin:2em;color:#222}} table{{border-collapse:collapse}}"
      " td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}} "
      "td:first-child,th:first-child{{text-align:left}}"
      " code{{font-size:85%}} .legend{{list-style:none;padding:0}} .legend span{{display:inline-block;width:12px;"
      "height:12px;margin-right:6px}}</style>\n</head>\n<body>\n<h1>optune report</h1>\n"
      "<p>Database <code>{0}</code>: {1} records, {2} tasks{4}. Generated {3}.</p>\n<h2>Default vs tuned</h2>\n",
      escaped(source), database.count(), tasks.size(), date_text(static_cast<double>(std::time(nullptr))),
      passed_over == 0 ? "" : fmt::format(" ({} bad records passed over: see optune query --history)", passed_over));
  html += summary_table(tasks);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& task = tasks[i];
    auto curves = run_curves(task);
    html += fmt::format("<h2 id=\"task{}\">{} <small>({}, {}, {})</small></h2>\n", i, escaped(task.key.workload_key),
                        escaped(task.key.template_name), escaped(task.key.target), escaped(task.device_name));
    html += svg_plot(curves) + legend(curves);
  }
  for (const auto& dispatch : database.dispatches("", "")) {
    try {
      html += dispatch_section(dispatch);
    } catch (const nlohmann::json::exception&) {
      html += fmt::format("<p>Dispatch {} cannot be read (its rule is not what optune dispatch stores).</p>\n",
                          dispatch.id);
    }
  }
  return html + "</body>\n</html>\n";
}

}  // namespace optune::tuner
