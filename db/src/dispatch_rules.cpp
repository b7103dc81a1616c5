// The dispatch_rules table (schema 7): shape ranges' measured rules, stored beside the records.
#include <cmath>
#include <stdexcept>

#include "database_impl.hpp"

namespace optune::db {
namespace {

constexpr const char* kColumns =
    "id, template_name, target, device_id, low_key, high_key, rule, timestamp, optune_version";

std::string rule_text(const DispatchRecord& dispatch) {
  return dispatch.rule.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The row's identity: every field but its id.
std::string content_hash(const DispatchRecord& dispatch) {
  return sha256_hex(nlohmann::json{dispatch.template_name, dispatch.target, dispatch.device_id, dispatch.low_key,
                                   dispatch.high_key, rule_text(dispatch), dispatch.timestamp,
                                   dispatch.optune_version}
                        .dump());
}

DispatchRecord read_dispatch(const Statement& row) {
  DispatchRecord dispatch;
  dispatch.id = row.column_int(0);
  dispatch.template_name = row.column_text(1);
  dispatch.target = row.column_text(2);
  dispatch.device_id = row.column_text(3);
  dispatch.low_key = row.column_text(4);
  dispatch.high_key = row.column_text(5);
  try {
    dispatch.rule = nlohmann::json::parse(row.column_text(6));
  } catch (const nlohmann::json::exception&) {
    throw DatabaseError("dispatch rule " + std::to_string(dispatch.id) + " is not JSON");
  }
  dispatch.timestamp = row.column_double(7);
  dispatch.optune_version = row.column_text(8);
  return dispatch;
}

std::vector<DispatchRecord> read_dispatches(const Connection& connection, const std::string& sql,
                                            const std::vector<std::string>& parameters) {
  auto statement = connection.prepare(sql);
  for (std::size_t i = 0; i < parameters.size(); ++i) statement->bind_text(static_cast<int>(i + 1), parameters[i]);
  std::vector<DispatchRecord> dispatches;
  while (statement->step()) dispatches.push_back(read_dispatch(*statement));
  return dispatches;
}

}  // namespace

std::int64_t write_dispatch(Connection& connection, const DispatchRecord& dispatch) {
  auto insert = connection.prepare(
      "INSERT INTO dispatch_rules (content_hash, template_name, target, device_id, low_key, high_key, rule,"
      " timestamp, optune_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
      " ON CONFLICT (content_hash) DO NOTHING RETURNING id");
  insert->bind_text(1, content_hash(dispatch))
      .bind_text(2, dispatch.template_name)
      .bind_text(3, dispatch.target)
      .bind_text(4, dispatch.device_id)
      .bind_text(5, dispatch.low_key)
      .bind_text(6, dispatch.high_key)
      .bind_text(7, rule_text(dispatch))
      .bind_double(8, dispatch.timestamp)
      .bind_text(9, dispatch.optune_version);
  const std::int64_t id = insert->step() ? insert->column_int(0) : 0;
  while (insert->step()) {
  }
  return id;
}

std::int64_t Database::insert_dispatch(const DispatchRecord& dispatch) {
  impl_->require_writable();
  if (dispatch.template_name.empty() || dispatch.target.empty() || dispatch.device_id.empty() ||
      dispatch.low_key.empty() || dispatch.high_key.empty())
    throw DatabaseError("a dispatch rule needs its template, target, device and range");
  return impl_->run([&] {
    Transaction transaction(*impl_->connection);
    const std::int64_t id = write_dispatch(*impl_->connection, dispatch);
    transaction.commit();
    return id;
  });
}

std::vector<DispatchRecord> Database::dispatches(const std::string& target, const std::string& device_id) const {
  std::string where;
  std::vector<std::string> parameters;
  if (!target.empty()) {
    where += " AND target = ?";
    parameters.push_back(target);
  }
  if (!device_id.empty()) {
    where += " AND device_id = ?";
    parameters.push_back(device_id);
  }
  const std::string sql = std::string("SELECT ") + kColumns + " FROM (SELECT *, row_number() OVER (PARTITION BY" +
                          " template_name, target, device_id, low_key, high_key ORDER BY timestamp DESC, id DESC)" +
                          " AS latest FROM dispatch_rules WHERE 1 = 1" + where +
                          ") AS ranked WHERE latest = 1 ORDER BY timestamp DESC, id DESC";
  return impl_->run([&] { return read_dispatches(*impl_->connection, sql, parameters); });
}

std::vector<DispatchRecord> all_dispatches(const Connection& connection) {
  std::string sql = "SELECT ";
  sql.append(kColumns).append(" FROM dispatch_rules ORDER BY timestamp, id");
  return read_dispatches(connection, sql, {});
}

std::size_t merge_dispatches(Connection& into, const Connection& from) {
  std::size_t added = 0;
  for (const auto& dispatch : all_dispatches(from))
    if (write_dispatch(into, dispatch) != 0) ++added;
  return added;
}

nlohmann::json dispatch_line(const DispatchRecord& dispatch) {
  return {{"dispatch_rule",
           {{"template", dispatch.template_name},
            {"target", dispatch.target},
            {"device_id", dispatch.device_id},
            {"low", dispatch.low_key},
            {"high", dispatch.high_key},
            {"rule", dispatch.rule},
            {"timestamp", dispatch.timestamp},
            {"optune_version", dispatch.optune_version}}}};
}

bool is_dispatch_line(const nlohmann::json& line) { return line.is_object() && line.contains("dispatch_rule"); }

DispatchRecord dispatch_from_line(const nlohmann::json& line) {
  const auto& fields = line.at("dispatch_rule");
  if (!fields.is_object()) throw std::invalid_argument("dispatch_rule is not an object");
  auto text = [&fields](const std::string& name) {
    if (!fields.contains(name) || !fields[name].is_string() || fields[name].get<std::string>().empty())
      throw std::invalid_argument("dispatch_rule: " + name + " must be a non-empty string");
    return fields[name].get<std::string>();
  };
  DispatchRecord dispatch;
  dispatch.template_name = text("template");
  dispatch.target = text("target");
  dispatch.device_id = text("device_id");
  dispatch.low_key = text("low");
  dispatch.high_key = text("high");
  dispatch.optune_version = text("optune_version");
  if (!fields.contains("rule") || !fields["rule"].is_object())
    throw std::invalid_argument("dispatch_rule: rule must be an object");
  dispatch.rule = fields["rule"];
  if (!fields.contains("timestamp") || !fields["timestamp"].is_number() || !std::isfinite(fields["timestamp"].get<double>()))
    throw std::invalid_argument("dispatch_rule: timestamp must be a number");
  dispatch.timestamp = fields["timestamp"].get<double>();
  return dispatch;
}

}  // namespace optune::db
