#include "optune/app/query_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace optune::app {
namespace {

// "+-2.1%", "-" where unknown.
std::string spread_text(const db::TuningRecord& record) {
  return record.spread ? fmt::format("+-{:.1f}%", *record.spread * 100) : "-";
}

// Where the record's seconds went: "1.2/0.01/0.21" s building, checking, timing ("-" unknown).
std::string seconds_split_text(const db::TuningRecord& record) {
  const auto part = [](const std::optional<double>& seconds) {
    return seconds ? fmt::format("{:.2g}", *seconds) : "-";
  };
  return fmt::format("{:.2g}/{}/{}", record.build_seconds, part(record.check_seconds), part(record.timing_seconds));
}

// How far the output was from the reference: "3.1e-07", "-" where no check says.
std::string check_error_text(const db::TuningRecord& record) {
  return record.check_error ? fmt::format("{:.2g}", *record.check_error) : "-";
}

std::string device_name(const db::TuningRecord& record) {
  const auto name = record.device_fingerprint.is_object() ? record.device_fingerprint.value("name", "") : "";
  return name.empty() ? record.device_id : name;
}

struct Column {
  std::string heading;
  bool numeric = false;  // right-aligned
};

// Columns padded to their widest cell; the last one (the config) is left as long as it is.
std::string aligned(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& column : columns) widths.push_back(column.heading.size());
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text += ' ';
      if (i + 1 == cells.size())
        text += cells[i];
      else if (columns[i].numeric)
        text += fmt::format("{:>{}}", cells[i], widths[i]);
      else
        text += fmt::format("{:<{}}", cells[i], widths[i]);
    }
    return text + '\n';
  };
  std::vector<std::string> headings;
  for (const auto& column : columns) headings.push_back(column.heading);
  std::string text = line(headings);
  for (const auto& row : rows) text += line(row);
  return text;
}

}  // namespace

std::string device_label(const db::TuningRecord& record, const std::vector<db::TuningRecord>& listed) {
  const std::string name = device_name(record);
  if (name == record.device_id) return name;
  for (const auto& other : listed)
    if (other.device_id != record.device_id && device_name(other) == name)
      return fmt::format("{} [{}]", name, record.device_id.substr(0, 8));
  return name;
}

std::string query_table(const QueryResult& result) {
  const auto& records = result.records;
  static const std::vector<Column> kColumns = {{"workload"},      {"target"},           {"device"},
                                               {"GFLOP/s", true}, {"median ms", true},  {"spread", true},
                                               {"status"},        {"build/check/time"}, {"check error", true},
                                               {"config"}};
  std::vector<std::vector<std::string>> rows;
  bool any_noisy = false;
  for (const auto& r : records) {
    // A noisy record is marked where it is read: its figure is not to be trusted as it stands.
    any_noisy = any_noisy || r.is_noisy();
    rows.push_back({r.workload_key, r.target, device_label(r, records), fmt::format("{:.2f}", r.gflops),
                    fmt::format("{:.4f}", r.median_seconds * 1e3), spread_text(r),
                    r.error_kind + (r.is_noisy() ? " noisy" : ""), seconds_split_text(r), check_error_text(r),
                    r.config.dump()});
  }
  std::string text = aligned(kColumns, rows);
  if (records.empty()) text += "(no records match)\n";
  for (const auto& r : records)
    if (auto next = result.tied.find(r.id); next != result.tied.end())
      text += fmt::format("tied: {} on {}: the best two configs are within noise ({:.4f} ms and {:.4f} ms)\n",
                          r.workload_key, device_label(r, records), r.median_seconds * 1e3,
                          next->second.median_seconds * 1e3);
  if (any_noisy)
    text += fmt::format(
        "noisy: measured while other processes took over {:.0f}% of the CPU, or known to no better than +-{:.0f}%\n",
        db::kBusyLoad * 100, db::kNoisySpread * 100);
  return text;
}

}  // namespace optune::app
