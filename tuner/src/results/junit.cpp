#include "optune/tuner/results/junit.hpp"

#include <fmt/format.h>

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

}  // namespace

std::string junit_xml(const std::string& command, const std::string& suite_name, const std::vector<JUnitCase>& cases) {
  std::size_t failures = 0, skipped = 0;
  double seconds = 0;
  std::string body;
  for (const auto& c : cases) {
    seconds += c.seconds;
    body += fmt::format("    <testcase classname=\"optune.{}.{}\" name=\"{}\" time=\"{:.3f}\"", xml_escaped(command),
                        xml_escaped(suite_name), xml_escaped(c.name), c.seconds);
    switch (c.outcome) {
      case JUnitCase::Outcome::kPassed:
        body += "/>\n";
        break;
      case JUnitCase::Outcome::kFailed:
        ++failures;
        body += fmt::format(">\n      <failure type=\"{}\" message=\"{}\"/>\n    </testcase>\n",
                            xml_escaped(c.failure_type), xml_escaped(c.message));
        break;
      case JUnitCase::Outcome::kSkipped:
        ++skipped;
        body += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml_escaped(c.message));
        break;
    }
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"optune {0}\" tests=\"{1}\" failures=\"{2}\" "
      "skipped=\"{3}\" time=\"{4:.3f}\">\n  <testsuite name=\"{5}\" tests=\"{1}\" failures=\"{2}\" errors=\"0\" "
      "skipped=\"{3}\" time=\"{4:.3f}\">\n{6}  </testsuite>\n</testsuites>\n",
      xml_escaped(command), cases.size(), failures, skipped, seconds, xml_escaped(suite_name), body);
}

}  // namespace optune::tuner
