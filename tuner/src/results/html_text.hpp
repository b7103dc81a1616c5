// Text as the HTML report writes it: escaped for an element or an attribute, and dates in local
// time. Private to the report's files (html_report.cpp, trial_plot.cpp, dispatch_section.cpp).
#pragma once

#include <ctime>
#include <string>

namespace optune::tuner {

inline std::string html_escaped(const std::string& text) {
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

// "2026-11-25 18:30", local time.
inline std::string date_text(double unix_seconds) {
  std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&time, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &local);
  return text;
}

}  // namespace optune::tuner
