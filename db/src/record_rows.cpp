#include "record_rows.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace optune::db {

std::string sha256_hex(const std::string& text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    throw DatabaseError("cannot hash a row (OpenSSL SHA-256 failed)");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

namespace {

// SHA-256 (hex) of the record's canonical JSON line: the identity that makes a repeated insert,
// import or merge of the same record a no-op.
std::string content_hash(const TuningRecord& record) {
  return sha256_hex(to_json(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string device_name(const nlohmann::json& fingerprint) {
  if (!fingerprint.is_object()) return {};
  const auto it = fingerprint.find("name");
  return it != fingerprint.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void check_storable(const TuningRecord& record) {
  const auto require_text = [](const std::string& value, const char* field) {
    if (value.empty()) throw DatabaseError(std::string("cannot store a record without ") + field);
  };
  require_text(record.workload_key, "workload_key");
  require_text(record.template_name, "template_name");
  require_text(record.target, "target");
  require_text(record.device_id, "device_id");
  require_text(record.error_kind, "error_kind");
  const auto require_finite = [](double value, const char* field) {
    if (!std::isfinite(value)) throw DatabaseError(std::string("cannot store a record whose ") + field + " is not finite");
  };
  require_finite(record.median_seconds, "median_seconds");
  require_finite(record.gflops, "gflops");
  require_finite(record.build_seconds, "build_seconds");
  require_finite(record.timestamp, "timestamp");
  for (double cost : record.costs) require_finite(cost, "costs");
  if (record.spread) require_finite(*record.spread, "spread");
  if (record.load) require_finite(*record.load, "load");
  if (record.device_load) require_finite(*record.device_load, "device_load");
  if (record.check_seconds) require_finite(*record.check_seconds, "check_seconds");
  if (record.timing_seconds) require_finite(*record.timing_seconds, "timing_seconds");
  if (record.check_error) require_finite(*record.check_error, "check_error");
  if (!record.toolchain.is_null() && !record.toolchain.is_object())
    throw DatabaseError("cannot store a record whose toolchain is not an object");
}

// Nesting of a stored JSON value beyond which it is not read: nlohmann's values copy, print and
// free themselves recursively, so a forged row of 100,000 brackets would overflow the stack.
constexpr int kMaxStoredDepth = 64;

bool nests_deeper_than(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if ((c == '[' || c == '{') && ++depth > limit) {
      return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// A stored JSON column as written, or, where a hand edit or a damaged page left it unreadable, a
// string saying so: the record then fails RecordCheck (passed over with a note) instead of
// failing the command that reads it.
nlohmann::json stored_json(const std::string& text, const char* column) {
  if (nests_deeper_than(text, kMaxStoredDepth)) return std::string("unreadable ") + column + ": nested too deep";
  auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::string("unreadable ") + column + ": not JSON";
  return value;
}

// Costs that are not a list of numbers read as none (a record without costs fails RecordCheck).
std::vector<double> stored_costs(const std::string& text) {
  const auto value = stored_json(text, "costs");
  std::vector<double> costs;
  if (!value.is_array()) return costs;
  for (const auto& cost : value) {
    if (!cost.is_number()) return {};
    costs.push_back(cost.get<double>());
  }
  return costs;
}

// Text as valid UTF-8, each invalid byte as U+FFFD: a compiler's message in Latin-1 must not make
// the record unstorable, nor a hand-edited one unreadable as JSON.
std::string valid_utf8(const std::string& text) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return text;
  const std::string checked =
      nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(checked).get<std::string>();
}

// `text` as a LIKE pattern that matches it literally: its '%', '_' and backslashes escaped.
std::string like_literal(const std::string& text) {
  std::string pattern;
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  return pattern;
}

}  // namespace

std::string select_records(const std::string& extra_columns) {
  return "SELECT r.id, r.workload_key, r.template_name, r.target, r.device_id, d.fingerprint, r.config,"
         " r.costs, r.median_seconds, r.gflops, r.error_kind, r.error_message, r.build_seconds, r.timestamp,"
         " r.tuner, r.run_id, r.optune_version, r.is_default, r.spread, r.load, r.winner, r.device_load,"
         " r.check_seconds, r.timing_seconds, r.toolchain, r.check_error" +
         extra_columns +
         " FROM records r LEFT JOIN devices d ON d.id = r.device_id LEFT JOIN workloads w ON w.key = r.workload_key";
}

TuningRecord read_record(const Statement& row) {
  TuningRecord record;
  record.id = row.column_int(0);
  record.workload_key = valid_utf8(row.column_text(1));
  record.template_name = valid_utf8(row.column_text(2));
  record.target = valid_utf8(row.column_text(3));
  record.device_id = valid_utf8(row.column_text(4));
  // A record whose device row is missing reads with no fingerprint, which RecordCheck refuses.
  record.device_fingerprint = stored_json(row.column_text(5), "device fingerprint");
  record.config = stored_json(row.column_text(6), "config");
  record.costs = stored_costs(row.column_text(7));
  record.median_seconds = row.column_double(8);
  record.gflops = row.column_double(9);
  record.error_kind = valid_utf8(row.column_text(10));
  record.error_message = valid_utf8(row.column_text(11));
  record.build_seconds = row.column_double(12);
  record.timestamp = row.column_double(13);
  record.tuner = valid_utf8(row.column_text(14));
  record.run_id = valid_utf8(row.column_text(15));
  record.optune_version = valid_utf8(row.column_text(16));
  record.is_default = row.column_int(17) != 0;
  record.spread = row.column_optional_double(18);
  record.load = row.column_optional_double(19);
  record.winner = row.column_int(20) != 0;
  record.device_load = row.column_optional_double(21);
  record.check_seconds = row.column_optional_double(22);
  record.timing_seconds = row.column_optional_double(23);
  if (!row.column_is_null(24)) record.toolchain = stored_json(row.column_text(24), "toolchain");
  record.check_error = row.column_optional_double(25);
  return record;
}

void WhereClause::add(const std::string& condition) {
  sql += sql.empty() ? " WHERE " : " AND ";
  sql += condition;
}

void WhereClause::bind(Statement& statement, int first_index) const {
  int index = first_index;
  for (const auto& parameter : parameters) {
    if (const auto* text = std::get_if<std::string>(&parameter)) {
      statement.bind_text(index++, *text);
    } else {
      statement.bind_double(index++, std::get<double>(parameter));
    }
  }
}

WhereClause where_clause(const RecordFilter& filter) {
  WhereClause where;
  const auto add_exact = [&where](const char* column, const std::string& value) {
    if (value.empty()) return;
    where.add(std::string(column) + " = ?");
    where.parameters.emplace_back(value);
  };
  add_exact("w.op", filter.op);
  add_exact("r.workload_key", filter.workload_key);
  add_exact("r.target", filter.target);
  add_exact("r.template_name", filter.template_name);
  if (!filter.device.empty()) {
    // An exact id, or a case-insensitive substring of the name ("xeon", "rtx 4090").
    // (LIKE with the pattern's own wildcards escaped: both engines read it alike.)
    where.add("(r.device_id = ? OR lower(d.name) LIKE '%' || lower(?) || '%' ESCAPE '\\')");
    where.parameters.emplace_back(filter.device);
    where.parameters.emplace_back(like_literal(filter.device));
  }
  if (filter.since > 0) {
    where.add("r.timestamp >= ?");
    where.parameters.emplace_back(filter.since);
  }
  if (filter.ok_only) where.add("r.error_kind = 'ok'");
  return where;
}

WhereClause where_clause(const TaskKey& task) {
  WhereClause where;
  where.add("r.workload_key = ? AND r.template_name = ? AND r.target = ? AND r.device_id = ?");
  where.parameters = {task.workload_key, task.template_name, task.target, task.device_id};
  return where;
}

std::string workload_op(const std::string& workload_key) { return workload_key.substr(0, workload_key.find('.')); }

RecordWriter::RecordWriter(Connection& connection)
    : insert_device_(connection.prepare(
          "INSERT INTO devices (id, name, fingerprint) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO NOTHING")),
      insert_workload_(connection.prepare(
          "INSERT INTO workloads (key, op) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING")),
      insert_record_(connection.prepare(
          "INSERT INTO records (content_hash, workload_key, template_name, target, device_id, config, costs,"
          " median_seconds, gflops, error_kind, error_message, build_seconds, timestamp, tuner, run_id,"
          " optune_version, is_default, spread, load, winner, device_load, check_seconds, timing_seconds, toolchain,"
          " check_error)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
          " ?22, ?23, ?24, ?25)"
          // Only the content hash may conflict; any other violation must fail loudly.
          " ON CONFLICT (content_hash) DO NOTHING RETURNING id")) {}

std::int64_t RecordWriter::write(const TuningRecord& record) {
  check_storable(record);
  // The first fingerprint stored for an id is kept: the id is a hash of the fingerprint.
  if (stored_devices_.insert(record.device_id).second) {
    insert_device_->reset();
    insert_device_->bind_text(1, record.device_id)
        .bind_text(2, device_name(record.device_fingerprint))
        .bind_text(3, record.device_fingerprint.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    insert_device_->step();
  }
  if (stored_workloads_.insert(record.workload_key).second) {
    insert_workload_->reset();
    insert_workload_->bind_text(1, record.workload_key).bind_text(2, workload_op(record.workload_key));
    insert_workload_->step();
  }

  insert_record_->reset();
  insert_record_->bind_text(1, content_hash(record))
      .bind_text(2, record.workload_key)
      .bind_text(3, record.template_name)
      .bind_text(4, record.target)
      .bind_text(5, record.device_id)
      .bind_text(6, record.config_text())
      .bind_text(7, nlohmann::json(record.costs).dump())
      .bind_double(8, record.median_seconds)
      .bind_double(9, record.gflops)
      .bind_text(10, record.error_kind)
      .bind_text(11, valid_utf8(record.error_message))
      .bind_double(12, record.build_seconds)
      .bind_double(13, record.timestamp)
      .bind_text(14, record.tuner)
      .bind_text(15, record.run_id)
      .bind_text(16, record.optune_version)
      .bind_int(17, record.is_default ? 1 : 0)
      .bind_optional_double(18, record.spread)
      .bind_optional_double(19, record.load)
      .bind_int(20, record.winner ? 1 : 0)
      .bind_optional_double(21, record.device_load)
      .bind_optional_double(22, record.check_seconds)
      .bind_optional_double(23, record.timing_seconds);
  if (record.toolchain.is_null()) insert_record_->bind_null(24);
  else insert_record_->bind_text(24, record.toolchain.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  insert_record_->bind_optional_double(25, record.check_error);
  // A row comes back only when the record was new.
  const std::int64_t id = insert_record_->step() ? insert_record_->column_int(0) : 0;
  while (insert_record_->step()) {
  }
  return id;
}

}  // namespace optune::db
