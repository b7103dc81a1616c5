#include "results/trial_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "results/html_text.hpp"

namespace optune::tuner {
namespace {

// Pixels: the plot area, then under it the strip of records that are not ok, the x tick labels
// and the axis title.
constexpr double kWidth = 720, kLeft = 72, kRight = 24, kTop = 16, kPlotHeight = 220;
constexpr double kPlotBottom = kTop + kPlotHeight, kStripY = kPlotBottom + 18, kTickY = kStripY + 24;
constexpr double kHeight = kTickY + 30;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr const char* kTrialColour = "#4e79a7";
constexpr const char* kDefaultColour = "#59a14f";
constexpr const char* kRemeasureColour = "#f28e2b";

// A step for `ticks` or fewer ticks over [0, span]: 1, 2 or 5 times a power of ten.
double tick_step(double span, int ticks) {
  if (span <= 0) return 1;
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double step : {1.0, 2.0, 5.0})
    if (step * power >= raw) return step * power;
  return 10 * power;
}

struct Axes {
  double x_max = 1;  // trials
  double y_max = 1;  // in the task's metric
  double x_step = 1, y_step = 1;
  double x(double trial) const { return kLeft + kPlotWidth * trial / x_max; }
  double y(double value) const { return kTop + kPlotHeight * (1 - value / y_max); }
};

Axes axes_of(const TaskTrials& task) {
  Axes axes;
  const double trials = static_cast<double>(std::max<std::size_t>(task.trials, 1));
  axes.x_step = std::max(1.0, std::ceil(tick_step(trials, 8)));
  axes.x_max = axes.x_step * std::ceil(trials / axes.x_step);  // the axis ends on a tick
  double highest = task.baseline.value_or(0);
  for (const auto& point : task.points)
    if (point.value) highest = std::max(highest, *point.value);
  axes.y_step = tick_step(highest > 0 ? highest : 1, 5);
  axes.y_max = axes.y_step * std::max(1.0, std::ceil(highest / axes.y_step));
  return axes;
}

std::string axes_svg(const TaskTrials& task, const Axes& axes) {
  std::string svg;
  for (int i = 0; i * axes.y_step <= axes.y_max * (1 + 1e-9); ++i) {
    const double value = i * axes.y_step, y = axes.y(value);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e4e4e4\"/>"
        "<text class=\"tick-y\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.6g}</text>\n",
        kLeft, y, kWidth - kRight, y, kLeft - 6, y + 4, value);
  }
  for (int i = 0; i * axes.x_step <= axes.x_max; ++i) {
    const double trial = i * axes.x_step, x = axes.x(trial);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\"/>"
        "<text class=\"tick-x\" x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4:.0f}</text>\n",
        x, kPlotBottom, kPlotBottom + 4, kTickY, trial);
  }
  svg += fmt::format(
      "<line class=\"axis\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\"/>"
      "<line class=\"axis\" x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{3:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\"/>\n",
      kLeft, kTop, kPlotBottom, kWidth - kRight);
  svg += fmt::format(
      "<text class=\"strip-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#666\">not ok</text>\n",
      kLeft - 6, kStripY + 4);
  svg +=
      fmt::format("<text class=\"axis-title axis-x\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">trial</text>\n",
                  kLeft + kPlotWidth / 2, kHeight - 4);
  const std::string y_title = task.metric == Metric::kGflops ? "GFLOP/s" : "median time (ms)";
  svg += fmt::format(
      "<text class=\"axis-title axis-y\" x=\"14\" y=\"{0:.1f}\" transform=\"rotate(-90 14 {0:.1f})\" "
      "text-anchor=\"middle\">{1}</text>\n",
      kTop + kPlotHeight / 2, y_title);
  return svg;
}

// A step line: flat until the trial that improved on it.
std::string best_so_far_svg(const TaskTrials& task, const Axes& axes) {
  if (task.best_so_far.empty()) return "";
  std::string points;
  double previous = task.best_so_far.front().second;
  for (const auto& [trial, value] : task.best_so_far) {
    points += fmt::format("{:.1f},{:.1f} ", axes.x(trial), axes.y(previous));
    points += fmt::format("{:.1f},{:.1f} ", axes.x(trial), axes.y(value));
    previous = value;
  }
  points += fmt::format("{:.1f},{:.1f}", axes.x(axes.x_max), axes.y(previous));
  return fmt::format(
      "<polyline class=\"best-so-far\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\">"
      "<title>best so far</title></polyline>\n",
      kTrialColour, points);
}

std::string baseline_svg(const TaskTrials& task, const Axes& axes) {
  if (!task.baseline) return "";
  const double y = axes.y(*task.baseline);
  return fmt::format(
      "<line class=\"baseline\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
      "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
      "<text class=\"baseline-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">default {:.4g} "
      "{}</text>\n",
      kLeft, y, kWidth - kRight, y, kDefaultColour, kWidth - kRight - 4, y - 5, kDefaultColour, *task.baseline,
      metric_unit(task.metric));
}

std::string point_title(const TaskTrials& task, const TrialPoint& point) {
  const auto& record = task.records[point.record];
  std::string what = record.is_remeasurement()
                         ? fmt::format("re-measured ({}) after trial {}", record.tuner, point.trial)
                     : record.is_default ? fmt::format("default config, after trial {}", point.trial)
                                         : fmt::format("trial {}", point.trial);
  if (record.ok())
    what += fmt::format(": {:.4g} {}, {:.4f} ms", *point.value, metric_unit(task.metric), record.median_seconds * 1e3);
  else
    what += ": " + record.error_kind + (record.error_message.empty() ? "" : " " + record.error_message.substr(0, 200));
  return html_escaped(what + "; run " + record.run_id + "; " + record.config_text());
}

std::string point_svg(const TaskTrials& task, const TrialPoint& point, const Axes& axes) {
  const auto& record = task.records[point.record];
  const char* role = record.is_remeasurement() ? "remeasure" : record.is_default ? "default" : "trial";
  const std::string data = fmt::format("data-trial=\"{}\" data-role=\"{}\" data-kind=\"{}\"", point.trial, role,
                                       html_escaped(record.error_kind));
  const std::string title = "<title>" + point_title(task, point) + "</title>";
  const double x = axes.x(static_cast<double>(point.trial));
  if (!point.value)
    return fmt::format(
        "<path class=\"point not-ok\" {} d=\"M{:.1f},{:.1f}l8,8m0,-8l-8,8\" stroke=\"{}\" "
        "stroke-width=\"2\">{}</path>\n",
        data, x - 4, kStripY - 4, error_kind_colour(record.error_kind), title);
  const double y = axes.y(*point.value);
  if (record.is_remeasurement())
    return fmt::format(
        "<path class=\"point remeasure\" {} d=\"M{:.1f},{:.1f}l5,5l-5,5l-5,-5z\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.5\">{}</path>\n",
        data, x, y - 5, kRemeasureColour, title);
  if (record.is_default)
    return fmt::format(
        "<rect class=\"point default\" {} x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" fill=\"{}\">{}</rect>\n",
        data, x - 4, y - 4, kDefaultColour, title);
  return fmt::format(
      "<circle class=\"point trial\" {} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" "
      "fill-opacity=\"0.7\">{}</circle>\n",
      data, x, y, kTrialColour, title);
}

}  // namespace

const char* error_kind_colour(const std::string& kind) {
  static const std::pair<const char*, const char*> kColours[] = {
      {"build_error", "#e15759"},     {"runtime_error", "#b07aa1"},  {"crash", "#7b3294"},
      {"timeout", "#9c755f"},         {"wrong_answer", "#d62728"},   {"slow", "#edc948"},
      {"transport_error", "#bab0ac"}, {"reference_error", "#76b7b2"}};
  for (const auto& [name, colour] : kColours)
    if (kind == name) return colour;
  return "#555555";
}

std::string trial_plot(const TaskTrials& task, std::int64_t headline) {
  const Axes axes = axes_of(task);
  std::string svg = fmt::format(
      "<svg class=\"trials\" data-metric=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
      "width=\"{}\" height=\"{}\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">\n",
      task.metric == Metric::kGflops ? "gflops" : "ms", kWidth, kHeight, kWidth, kHeight);
  svg += axes_svg(task, axes) + baseline_svg(task, axes) + best_so_far_svg(task, axes);
  svg += "<g class=\"points\">\n";
  for (const auto& point : task.points) {
    svg += point_svg(task, point, axes);
    if (point.value && headline != 0 && task.records[point.record].id == headline)
      svg += fmt::format(
          "<circle class=\"headline\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"8\" fill=\"none\" stroke=\"#222\" "
          "stroke-width=\"1.5\"><title>the task's best as the report gives it</title></circle>\n",
          axes.x(static_cast<double>(point.trial)), axes.y(*point.value));
  }
  return svg + "</g>\n</svg>\n";
}

}  // namespace optune::tuner
