#include "optune/tuner/results/html_report.hpp"

#include <fmt/format.h>

#include <ctime>
#include <map>
#include <optional>
#include <vector>

#include "optune/tuner/results/output_text.hpp"
#include "optune/tuner/search/record_check.hpp"
#include "results/dispatch_section.hpp"
#include "results/html_text.hpp"
#include "results/task_trials.hpp"
#include "results/trial_plot.hpp"

namespace optune::tuner {
namespace {

// Configs and workload keys run long without a space: they wrap anywhere rather than widen the page.
constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222;max-width:80em}"
    "table{border-collapse:collapse;max-width:100%}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top}"
    "td:first-child,th:first-child{text-align:left}"
    "td.key,td.config,td.message{text-align:left;overflow-wrap:anywhere;word-break:break-word}"
    "td.config{min-width:12em;max-width:36em}"
    "code{font-size:85%;overflow-wrap:anywhere;word-break:break-word;white-space:normal}"
    "svg.trials{max-width:100%;height:auto}"
    ".legend{list-style:none;padding:0}.legend li{display:inline-block;margin-right:1.4em}"
    ".note{background:#fff8e1;border-left:3px solid #edc948;padding:4px 8px;max-width:60em}";

// The task's records as the report reads them, and its headline best as query ranks it.
struct TaskSection {
  TaskTrials trials;
  std::optional<db::TuningRecord> best;            // the config's latest successful record
  std::optional<db::TuningRecord> default_record;  // the default config's latest successful record
  std::string best_note;
};

TaskSection task_section(const db::Database& database, const db::RecordFilter& filter, TaskTrials trials) {
  TaskSection section{std::move(trials), std::nullopt, std::nullopt, ""};
  const db::TaskKey& key = section.trials.key;
  db::RecordFilter task_filter = filter;
  task_filter.workload_key = key.workload_key;
  task_filter.template_name = key.template_name;
  task_filter.target = key.target;
  task_filter.device = key.device_id;
  std::vector<std::string> passed_over;  // counted with the task's records already
  if (auto best = checked_top_k(database, task_filter, 1, passed_over); !best.empty()) section.best = best.front();
  if (const auto& index = section.trials.default_record) section.default_record = section.trials.records[*index];
  if (section.best) section.best_note = best_note(section.trials, *section.best);
  return section;
}

std::string milliseconds_cell(const std::optional<db::TuningRecord>& record) {
  return record ? fmt::format("{:.4f}", record->median_seconds * 1e3) : "-";
}

std::string gflops_cell(const std::optional<db::TuningRecord>& record, Metric metric) {
  return record && metric == Metric::kGflops ? fmt::format("{:.2f}", record->gflops) : "-";
}

std::string speedup_cell(const TaskSection& section) {
  const auto& best = section.best;
  const auto& baseline = section.default_record;
  if (!best || !baseline) return "-";
  if (best->config_text() == baseline->config_text()) return "default";
  if (best->is_noisy() || baseline->is_noisy()) return "busy";  // no ratio to trust, as job's summary says
  return speedup_text(baseline->median_seconds, best->median_seconds);
}

std::size_t not_ok_count(const TaskTrials& task) {
  std::size_t count = 0;
  for (const auto& [kind, records] : task.not_ok) count += records;
  return count;
}

std::string summary_table(const std::vector<TaskSection>& sections) {
  std::string html =
      "<table class=\"summary\">\n<tr><th>workload</th><th>template</th><th>target</th><th>device</th><th>records</th>"
      "<th>trials</th><th>not ok</th><th>default ms</th><th>default GFLOP/s</th><th>tuned ms</th>"
      "<th>tuned GFLOP/s</th><th>speed-up</th><th>tuned config</th></tr>\n";
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const auto& section = sections[i];
    const auto& task = section.trials;
    const std::string note_mark = section.best_note.empty() ? "" : fmt::format(" <a href=\"#task{}-best\">*</a>", i);
    html += fmt::format(
        "<tr><td class=\"key\"><a href=\"#task{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td class=\"config\"><code>{}</code></td>"
        "</tr>\n",
        i, html_escaped(task.key.workload_key), html_escaped(task.key.template_name), html_escaped(task.key.target),
        html_escaped(task.device_name), task.records.size(), task.trials, not_ok_count(task),
        milliseconds_cell(section.default_record), gflops_cell(section.default_record, task.metric),
        milliseconds_cell(section.best), note_mark, gflops_cell(section.best, task.metric), speedup_cell(section),
        section.best ? html_escaped(section.best->config_text()) : "-");
  }
  return html + "</table>\n";
}

std::string legend(const TaskTrials& task) {
  std::string html =
      "<ul class=\"legend\"><li><span style=\"color:#4e79a7\">&#9679;</span> trial</li>"
      "<li><span style=\"color:#59a14f\">&#9632;</span> default config</li>"
      "<li><span style=\"color:#f28e2b\">&#9671;</span> re-measured at the end of a run</li>"
      "<li><span style=\"color:#4e79a7\">&#9473;</span> best so far (trials and default)</li>"
      "<li><span style=\"color:#59a14f\">- -</span> default config's figure</li>"
      "<li>&#9711; the best as given above</li><li>&#10005; not ok, by error kind (below)</li></ul>\n";
  return html + fmt::format(
                    "<p>x: trial number within the task ({}); the default config and the re-measurements sit at the "
                    "trial before them. y: {}.</p>\n",
                    counted(task.trials, "trial"),
                    task.metric == Metric::kGflops
                        ? "GFLOP/s, higher is better"
                        : "median time in ms, lower is better (the records give no GFLOP/s)");
}

std::string runs_list(const TaskTrials& task) {
  struct Run {
    std::string tuner;
    double started = 0;
    std::size_t trials = 0;
  };
  std::map<std::string, Run> runs;
  std::vector<std::string> order;
  for (const auto& point : task.points) {
    const auto& record = task.records[point.record];
    auto [it, added] = runs.emplace(record.run_id, Run{"", record.timestamp, 0});
    if (added) order.push_back(record.run_id);
    if (!record.is_default && !record.is_remeasurement()) {
      it->second.tuner = record.tuner;
      ++it->second.trials;
    }
  }
  std::string html = "<ul class=\"runs\">";
  for (const auto& id : order) {
    const Run& run = runs[id];
    html += fmt::format("<li>run {} ({}, started {}): {}</li>", html_escaped(id),
                        html_escaped(run.tuner.empty() ? "default only" : run.tuner), date_text(run.started),
                        counted(run.trials, "trial"));
  }
  return html + "</ul>\n";
}

std::string not_ok_table(const TaskTrials& task) {
  if (task.not_ok.empty()) return "<p class=\"not-ok\">Every record is ok.</p>\n";
  std::map<std::string, std::string> latest_message;
  for (const auto& record : task.records)
    if (!record.ok()) latest_message[record.error_kind] = record.error_message.substr(0, 300);
  std::string html =
      "<table class=\"not-ok\">\n<caption>Not ok, by error kind (slow: cut short as over the bail-out bound, "
      "not a failure)</caption>\n<tr><th>error kind</th><th>records</th><th>latest message</th></tr>\n";
  for (const auto& [kind, count] : task.not_ok)
    html += fmt::format(
        "<tr><td class=\"kind\"><span style=\"color:{}\">&#10005;</span> {}</td><td class=\"count\">{}</td>"
        "<td class=\"message\">{}</td></tr>\n",
        error_kind_colour(kind), html_escaped(kind), count, html_escaped(latest_message[kind]));
  return html + "</table>\n";
}

std::string task_html(const TaskSection& section, std::size_t index) {
  const auto& task = section.trials;
  std::string html =
      fmt::format("<h2 id=\"task{}\">{} <small>({}, {}, {})</small></h2>\n", index, html_escaped(task.key.workload_key),
                  html_escaped(task.key.template_name), html_escaped(task.key.target), html_escaped(task.device_name));
  if (section.best)
    html +=
        fmt::format("<p class=\"best\" id=\"task{}-best\">Best: {:.4g} {} ({:.4f} ms), config <code>{}</code></p>\n",
                    index, metric_value(*section.best, task.metric), metric_unit(task.metric),
                    section.best->median_seconds * 1e3, html_escaped(section.best->config_text()));
  else
    html += "<p class=\"best\">No config succeeded.</p>\n";
  if (!section.best_note.empty()) html += "<p class=\"note\">" + html_escaped(section.best_note) + "</p>\n";
  return html + trial_plot(task, section.best ? section.best->id : 0) + legend(task) + runs_list(task) +
         not_ok_table(task);
}

// " (op gemm, since 2026-11-25 18:30)"; "" for every record.
std::string filter_text(const db::RecordFilter& filter) {
  std::string text;
  const auto add = [&text](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (!filter.op.empty()) add("op " + filter.op);
  if (!filter.target.empty()) add("target " + filter.target);
  if (!filter.device.empty()) add("device " + filter.device);
  if (filter.since > 0) add("since " + date_text(filter.since));
  return text.empty() ? "" : " (" + text + ")";
}

bool shows_dispatch(const db::DispatchRecord& dispatch, const db::RecordFilter& filter) {
  return dispatch.timestamp >= filter.since && (filter.op.empty() || dispatch.low_key.rfind(filter.op + ".", 0) == 0);
}

}  // namespace

HtmlReport html_report(const db::Database& database, const std::string& source, const db::RecordFilter& filter) {
  std::map<std::string, std::vector<db::TuningRecord>> by_task;  // ordered by workload, template, target, device
  // A forged or damaged record (a negative or impossible time) would be a task's "best" and its
  // speed-up: it is passed over and counted, as query and apply-best pass it over.
  RecordCheck check;
  std::size_t passed_over = 0, shown = 0;
  for (auto& record : database.records(filter)) {
    try {
      check.figures(record);
    } catch (const std::invalid_argument&) {
      ++passed_over;
      continue;
    }
    ++shown;
    by_task[record.workload_key + '\n' + record.template_name + '\n' + record.target + '\n' + record.device_id]
        .push_back(std::move(record));
  }
  std::vector<TaskSection> sections;
  for (auto& [id, records] : by_task) {
    const auto& first = records.front();
    db::TaskKey key{first.workload_key, first.template_name, first.target, first.device_id};
    sections.push_back(task_section(database, filter, task_trials(key, std::move(records))));
  }

  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>optune report: {0}</title>\n"
      "<style>{1}</style>\n</head>\n<body>\n<h1>optune report</h1>\n"
      "<p class=\"source\">Database <code>{0}</code>: {2} of {3}{4}, in {5}{6}. Generated {7}.</p>\n"
      "<h2>Default vs tuned</h2>\n",
      html_escaped(source), kStyle, counted(shown, "record"), database.count(), html_escaped(filter_text(filter)),
      counted(sections.size(), "task"),
      passed_over == 0
          ? ""
          : fmt::format(" ({} passed over: see optune query --history)", counted(passed_over, "bad record")),
      date_text(static_cast<double>(std::time(nullptr))));
  html += summary_table(sections);
  html +=
      "<p>* the tuned figure is not its trial's own: see the task. busy: the default's or the tuned figure was "
      "measured on a busy machine or with a wide spread, so no speed-up is given.</p>\n";
  for (std::size_t i = 0; i < sections.size(); ++i) html += task_html(sections[i], i);
  for (const auto& dispatch : database.dispatches("", "")) {
    if (!shows_dispatch(dispatch, filter)) continue;
    try {
      html += dispatch_section(dispatch);
    } catch (const nlohmann::json::exception&) {
      html += fmt::format("<p>Dispatch {} cannot be read (its rule is not what optune dispatch stores).</p>\n",
                          dispatch.id);
    }
  }
  return {html + "</body>\n</html>\n", shown, sections.size()};
}

}  // namespace optune::tuner
