#include "results/dispatch_section.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "results/html_text.hpp"

namespace optune::tuner {
namespace {

std::string cell_ratio(const nlohmann::json& seconds, double best) {
  return seconds.is_number() && best > 0 ? fmt::format("{:.3f}", seconds.get<double>() / best) : "-";
}

}  // namespace

std::string dispatch_section(const db::DispatchRecord& dispatch) {
  const auto& rule = dispatch.rule;
  std::string html = fmt::format("<h2>Dispatch {}: {} <small>({}, {}, {})</small></h2>\n", dispatch.id,
                                 html_escaped(rule.value("range", dispatch.low_key + " .. " + dispatch.high_key)),
                                 html_escaped(dispatch.template_name), html_escaped(dispatch.target),
                                 html_escaped(dispatch.device_id));
  const auto shapes = rule.value("shapes", nlohmann::json::array());
  const auto matrix = rule.value("matrix", nlohmann::json::array());
  const auto chosen = rule.value("chosen", nlohmann::json::array());
  html += "<table>\n<tr><th>leaf</th><th>config</th><th>tuned for</th></tr>\n";
  for (const auto& leaf : rule.value("leaves", nlohmann::json::array())) {
    const auto index = leaf.value("config", std::size_t{0});
    const auto configs = rule.value("configs", nlohmann::json::array());
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", html_escaped(leaf.value("name", "")), index,
                        index < configs.size() ? html_escaped(configs[index].value("from", "")) : "-");
  }
  html +=
      "</table>\n<p>Each finalist's time over the shape's best (- did not run); * the configs kept.</p>\n<table>\n"
      "<tr><th>finalist</th>";
  for (const auto& shape : shapes)
    html += "<th>" + html_escaped(shape.is_string() ? shape.get<std::string>() : "") + "</th>";
  html += "</tr>\n";
  std::vector<double> best(shapes.size(), 0);
  for (const auto& row : matrix)
    for (std::size_t s = 0; s < best.size() && row.is_array() && s < row.size(); ++s)
      if (row[s].is_number() && (best[s] == 0 || row[s].get<double>() < best[s])) best[s] = row[s].get<double>();
  for (std::size_t f = 0; f < matrix.size(); ++f) {
    const bool kept = std::find(chosen.begin(), chosen.end(), nlohmann::json(f)) != chosen.end();
    html += fmt::format("<tr><td>{}{}</td>", f, kept ? "*" : "");
    for (std::size_t s = 0; s < best.size(); ++s)
      html +=
          "<td>" + (matrix[f].is_array() && s < matrix[f].size() ? cell_ratio(matrix[f][s], best[s]) : "-") + "</td>";
    html += "</tr>\n";
  }
  html +=
      "</table>\n<p>Held-out shapes: time over their own tuned best.</p>\n<table>\n"
      "<tr><th>workload</th><th>leaf</th><th>rule</th><th>nearest</th></tr>\n";
  for (const auto& check : rule.value("held_out", nlohmann::json::array())) {
    const double own = check.value("own_best", nlohmann::json()).is_number() ? check["own_best"].get<double>() : 0;
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        html_escaped(check.value("workload", "")), html_escaped(check.value("leaf", "")),
                        cell_ratio(check.value("rule", nlohmann::json()), own),
                        cell_ratio(check.value("nearest", nlohmann::json()), own));
  }
  return html + "</table>\n";
}

}  // namespace optune::tuner
