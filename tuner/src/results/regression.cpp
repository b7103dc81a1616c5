#include "optune/tuner/results/regression.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "optune/tuner/search/task_history.hpp"

namespace optune::tuner {
namespace {

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

// Why a measurement taken now is not to be trusted as it stands; "" when it is.
std::string noise_of(const std::optional<measure::MeasureResult>& result) {
  if (!result || !result->ok()) return "";
  return db::noise_text(trust_fields(*result));
}

// The verdict of the measurements as they are.
Judgement judge_once(const RegressionCase& c, double tolerance) {
  if (!c.recorded_seconds) return {Verdict::kUntuned, "no tuned config recorded for this device; runs the default"};
  if (!c.tuned_now || !c.tuned_now->ok())
    return {Verdict::kRegression,
            "the tuned config fails now: " +
                (c.tuned_now ? std::string(measure::error_kind_name(c.tuned_now->error)) + " " + c.tuned_now->message
                             : std::string("not measured"))};
  const double now = c.tuned_now->median_seconds;
  const double limit = 1 + tolerance;
  if (now > *c.recorded_seconds * limit)
    return {Verdict::kRegression,
            fmt::format("tuned config {:.4f} ms now, {:.2f}x its recorded {:.4f} ms (tolerance {:.0f}%)", now * 1e3,
                        now / *c.recorded_seconds, *c.recorded_seconds * 1e3, tolerance * 100)};
  if (c.default_now && c.default_now->ok() && now > c.default_now->median_seconds * limit)
    return {Verdict::kRegression,
            fmt::format("tuned config {:.4f} ms is slower than the default's {:.4f} ms (tolerance {:.0f}%)", now * 1e3,
                        c.default_now->median_seconds * 1e3, tolerance * 100)};
  if (c.default_now && !c.default_now->ok())
    return {Verdict::kPass,
            "the default config fails now: " + std::string(measure::error_kind_name(c.default_now->error))};
  return {Verdict::kPass, ""};
}

}  // namespace

Judgement judge(const RegressionCase& c, double tolerance) {
  Judgement judgement = judge_once(c, tolerance);
  if (judgement.verdict != Verdict::kRegression) return judgement;
  if (c.attempts > 1) judgement.reason += fmt::format(" (best of {} measurements)", c.attempts);
  // A verdict from a busy machine is said to be one: the CI log shows why it may not hold.
  for (const auto& [what, result] : {std::pair{"tuned", &c.tuned_now}, std::pair{"default", &c.default_now}})
    if (const std::string noise = noise_of(*result); !noise.empty())
      judgement.reason += fmt::format("; noisy: the {} config {}", what, noise);
  return judgement;
}

measure::MeasureResult best_of(const std::optional<measure::MeasureResult>& kept, const measure::MeasureResult& now) {
  if (!kept) return now;
  if (kept->ok() != now.ok()) return kept->ok() ? *kept : now;
  if (!now.ok()) return *kept;  // both failed: the first failure's message
  return now.median_seconds < kept->median_seconds ? now : *kept;
}

std::optional<double> recorded_figure(const db::Database& database, const db::TaskKey& task,
                                      const db::TuningRecord& best) {
  std::vector<double> medians, quiet_medians;
  const std::string config = best.config_text();
  for (const auto& record : database.task_records(task)) {
    if (!record.ok() || record.config_text() != config) continue;
    medians.push_back(record.median_seconds);
    if (!record.is_noisy()) quiet_medians.push_back(record.median_seconds);
  }
  // Measurements of a busy machine count only where there is nothing else to go by.
  if (!quiet_medians.empty()) medians = std::move(quiet_medians);
  if (medians.empty()) return std::nullopt;
  std::sort(medians.begin(), medians.end());
  const std::size_t middle = medians.size() / 2;
  return medians.size() % 2 ? medians[middle] : (medians[middle - 1] + medians[middle]) / 2;
}

std::string junit_xml(const std::vector<RegressionCase>& cases, double tolerance, const std::string& suite_name) {
  std::size_t failures = 0, skipped = 0;
  double seconds = 0;
  std::string body;
  for (const auto& c : cases) {
    const Judgement judgement = judge(c, tolerance);
    seconds += c.seconds;
    body += fmt::format("    <testcase classname=\"optune.regress.{}\" name=\"{}\" time=\"{:.3f}\"",
                        xml_escaped(suite_name), xml_escaped(c.workload_key), c.seconds);
    if (judgement.verdict == Verdict::kPass) {
      body += "/>\n";
      continue;
    }
    if (judgement.verdict == Verdict::kRegression) {
      ++failures;
      body += fmt::format(">\n      <failure type=\"regression\" message=\"{}\"/>\n    </testcase>\n",
                          xml_escaped(judgement.reason));
    } else {
      ++skipped;
      body += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escaped(judgement.reason));
    }
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"optune regress\" tests=\"{0}\" failures=\"{1}\" "
      "skipped=\"{2}\" time=\"{3:.3f}\">\n  <testsuite name=\"{4}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\" time=\"{3:.3f}\">\n{5}  </testsuite>\n</testsuites>\n",
      cases.size(), failures, skipped, seconds, xml_escaped(suite_name), body);
}

}  // namespace optune::tuner
