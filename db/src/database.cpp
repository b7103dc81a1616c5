#include "optune/db/database.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <istream>
#include <ostream>
#include <set>

#include <sqlite3.h>
#include <sys/statvfs.h>

#include "database_impl.hpp"
#include "postgres_connection.hpp"
#include "postgres_schema.hpp"
#include "record_rows.hpp"
#include "schema.hpp"
#include "sqlite_handle.hpp"

namespace optune::db {

namespace {

// How long a statement waits for another process's lock before failing with "database is
// locked". A writer commits per batch, so readers and a second writer wait at most one commit;
// longer is a lock held by hand (an open sqlite3 shell), and a measured batch waits for it a while.
constexpr std::chrono::milliseconds kBusyTimeout{60'000};

bool is_on_read_only_mount(const std::string& path) {
  struct statvfs file_system {};
  return ::statvfs(path.c_str(), &file_system) == 0 && (file_system.f_flag & ST_RDONLY) != 0;
}

}  // namespace

namespace {

std::unique_ptr<Connection> open_file(const std::string& path, Database::Mode mode, int& version) {
  // SQLite opens "" as a private temporary database: every record would be lost at exit.
  if (path.empty()) throw DatabaseError("the database path is empty");
  const bool read_only = mode == Database::Mode::kReadOnly;
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory)
    throw DatabaseError(path + ": " + error.message());
  if (read_only && !std::filesystem::exists(status)) throw DatabaseError(path + ": no such database file");
  // A FIFO or a device would block the open, or be written into.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw DatabaseError(path + ": not a regular file");
  auto connection = sqlite::Connection::open(
      path, read_only ? sqlite::Connection::Access::kReadOnly : sqlite::Connection::Access::kReadWriteCreate,
      kBusyTimeout);
  try {
    version = prepare_schema(*connection, read_only);
  } catch (const sqlite::SqliteError& error) {
    // A WAL database in a folder this user cannot write, or on a read-only mount: SQLite cannot
    // make the -shm file a reader needs (SQLITE_READONLY, or SQLITE_CANTOPEN where the mount
    // refuses the open). No writer can be at work there either (it would need that file too), so
    // the file is read as immutable.
    const int code = error.code() & 0xff;
    if (!read_only || !(code == SQLITE_READONLY || (code == SQLITE_CANTOPEN && is_on_read_only_mount(path)))) throw;
    connection = sqlite::Connection::open(path, sqlite::Connection::Access::kImmutable, kBusyTimeout);
    version = prepare_schema(*connection, read_only);
  }
  return connection;
}

std::unique_ptr<Connection> open_server(const std::string& uri, Database::Mode mode, int& version) {
  auto connection = postgres::Connection::open(uri);
  version = prepare_postgres_schema(*connection, mode == Database::Mode::kReadOnly);
  return connection;
}

}  // namespace

bool is_server_uri(const std::string& location) { return postgres::is_server_uri(location); }

Database Database::open(const std::string& location, Mode mode, std::chrono::seconds reconnect_for) {
  int version = 0;
  auto connection = is_server_uri(location) ? open_server(location, mode, version) : open_file(location, mode, version);
  return Database(std::make_unique<Impl>(Impl{std::move(connection), mode, version, reconnect_for}));
}

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

int Database::schema_version() const { return impl_->schema_version; }

const std::string& Database::path() const { return impl_->connection->name(); }

std::vector<std::int64_t> Database::insert(const std::vector<TuningRecord>& records) {
  impl_->require_writable();
  return impl_->run([&] {
    std::vector<std::int64_t> ids;
    ids.reserve(records.size());
    Transaction transaction(*impl_->connection);
    RecordWriter writer(*impl_->connection);
    for (const TuningRecord& record : records) ids.push_back(writer.write(record));
    transaction.commit();
    return ids;
  });
}

namespace {

// A record that measured its config: a transport failure (the link to a remote device broke)
// measured nothing of it (TuningRecord::is_transport_failure).
constexpr const char* kMeasuredTheConfig = "r.error_kind != 'transport_error'";

// The latest successful record of each config among those `where` selects (a config measured
// again counts with its latest measurement), as a subquery; its `latest` column follows the
// record's columns, where read_record() does not look.
std::string latest_per_config(const WhereClause& where) {
  return "SELECT * FROM (" +
         select_records(", row_number() OVER (PARTITION BY r.workload_key, r.template_name, r.target,"
                        " r.device_id, r.config ORDER BY r.timestamp DESC, r.id DESC) AS latest") +
         where.sql + ") AS latest_records WHERE latest = 1";
}

}  // namespace

namespace {

// The winner a final comparison declared, where `fastest` does not displace it: its config's
// latest success (nullopt: `fastest` stands).
std::optional<TuningRecord> standing_winner(const Database& database, const TuningRecord& fastest,
                                            const TuningRecord& mark) {
  const TaskKey task{mark.workload_key, mark.template_name, mark.target, mark.device_id};
  if (task.template_name == fastest.template_name && mark.config_text() == fastest.config_text()) return std::nullopt;
  auto latest = database.latest_success(task, mark.config_text());
  if (!latest || displaces_winner(fastest, mark, *latest)) return std::nullopt;
  return latest;
}

bool same_config(const TuningRecord& a, const TuningRecord& b) {
  return a.template_name == b.template_name && a.config_text() == b.config_text();
}

std::string partition_of(const TuningRecord& record) {
  return record.workload_key + '\n' + record.target + '\n' + record.device_id;
}

}  // namespace

std::optional<TuningRecord> Database::best(const TaskKey& task) const {
  WhereClause where = where_clause(task);
  // The literal error_kind = 'ok' lets SQLite use the partial index records_best.
  where.add("r.error_kind = 'ok'");
  auto records = impl_->collect(latest_per_config(where) + " ORDER BY median_seconds, id LIMIT 1", where);
  if (records.empty()) return std::nullopt;
  if (auto mark = winner(task))
    if (auto standing = standing_winner(*this, records.front(), *mark)) return standing;
  return std::move(records.front());
}

std::optional<TuningRecord> Database::winner(const TaskKey& task) const {
  WhereClause where = where_clause(task);
  where.add("r.winner = 1");
  auto records = impl_->collect(select_records() + where.sql + " ORDER BY r.timestamp DESC, r.id DESC LIMIT 1", where);
  if (records.empty()) return std::nullopt;
  return std::move(records.front());
}

std::vector<TuningRecord> Database::top_k(const RecordFilter& filter, std::size_t k) const {
  WhereClause where = where_clause(filter);
  where.add("r.error_kind = 'ok'");
  if (k == 0) return impl_->collect(select_records() + where.sql + " ORDER BY r.median_seconds, r.id", where);
  // Rank the configs' latest records within each (workload, target, device); the rank column
  // follows the record's columns too.
  const std::string ranked = "SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY workload_key, target,"
                             " device_id ORDER BY median_seconds, id) AS rank FROM (" +
                             latest_per_config(where) + ") AS configs) AS ranked WHERE rank <= " + std::to_string(k) +
                             " ORDER BY median_seconds, id";
  std::vector<TuningRecord> records = impl_->collect(ranked, where);
  // Each partition's latest winner mark (of any template) keeps its config first, in the place of
  // the fastest, unless the fastest displaces it.
  WhereClause marks_where = where_clause(filter);
  marks_where.add("r.winner = 1");
  const auto marks = impl_->collect(
      "SELECT * FROM (" +
          select_records(", row_number() OVER (PARTITION BY r.workload_key, r.target, r.device_id"
                         " ORDER BY r.timestamp DESC, r.id DESC) AS latest_mark") +
          marks_where.sql + ") AS marks WHERE latest_mark = 1",
      marks_where);
  for (const auto& mark : marks) {
    const std::string partition = partition_of(mark);
    const auto first = std::find_if(records.begin(), records.end(),
                                    [&](const TuningRecord& r) { return partition_of(r) == partition; });
    if (first == records.end()) continue;
    auto standing = standing_winner(*this, *first, mark);
    if (!standing || standing->timestamp < filter.since) continue;
    const auto position = first - records.begin();
    std::erase_if(records, [&](const TuningRecord& r) { return partition_of(r) == partition && same_config(r, *standing); });
    records.insert(records.begin() + position, std::move(*standing));
    std::size_t kept = 0;
    std::erase_if(records, [&](const TuningRecord& r) { return partition_of(r) == partition && ++kept > k; });
  }
  return records;
}

std::optional<TuningRecord> Database::latest_success(const TaskKey& task, const std::string& config_text) const {
  WhereClause where = where_clause(task);
  where.add("r.error_kind = 'ok' AND r.config = ?");
  where.parameters.emplace_back(config_text);
  auto records = impl_->collect(select_records() + where.sql + " ORDER BY r.timestamp DESC, r.id DESC LIMIT 1", where);
  if (records.empty()) return std::nullopt;
  return std::move(records.front());
}

std::vector<TuningRecord> Database::records(const RecordFilter& filter) const {
  const WhereClause where = where_clause(filter);
  return impl_->collect(select_records() + where.sql + " ORDER BY r.timestamp, r.id", where);
}

std::vector<TuningRecord> Database::task_records(const TaskKey& task) const {
  const WhereClause where = where_clause(task);
  return impl_->collect(select_records() + where.sql + " ORDER BY r.timestamp, r.id", where);
}

std::unordered_set<std::string> Database::measured_configs(const TaskKey& task) const {
  WhereClause where = where_clause(task);
  where.add(kMeasuredTheConfig);
  return impl_->run([&] {
    auto statement = impl_->connection->prepare("SELECT DISTINCT r.config FROM records r" + where.sql);
    where.bind(*statement);
    std::unordered_set<std::string> configs;
    while (statement->step()) configs.insert(statement->column_text(0));
    return configs;
  });
}

bool Database::is_measured(const TaskKey& task, const std::string& config_text) const {
  WhereClause where = where_clause(task);
  where.add(kMeasuredTheConfig);
  where.add("r.config = ?");
  where.parameters.emplace_back(config_text);
  return impl_->run([&] {
    auto statement = impl_->connection->prepare("SELECT 1 FROM records r" + where.sql + " LIMIT 1");
    where.bind(*statement);
    return statement->step();
  });
}

std::size_t Database::count() const {
  return static_cast<std::size_t>(impl_->run([&] { return impl_->connection->query_int("SELECT count(*) FROM records"); }));
}

Database::JsonlCounts Database::export_jsonl(std::ostream& out, const RecordFilter& filter) const {
  const WhereClause where = where_clause(filter);
  JsonlCounts written;
  std::set<std::string> devices;  // of the records written
  // (Not run again after a lost server: the lines already written cannot be taken back.)
  impl_->for_each_record(select_records() + where.sql + " ORDER BY r.timestamp, r.id", where,
                         [&](TuningRecord&& record) {
                           out << to_json(record).dump() << '\n';
                           devices.insert(record.device_id);
                           ++written.records;
                         });
  if (filter.workload_key.empty())
    for (const auto& dispatch : impl_->run([&] { return all_dispatches(*impl_->connection); })) {
      const bool wanted = devices.count(dispatch.device_id) &&
                          (filter.target.empty() || dispatch.target == filter.target) &&
                          (filter.template_name.empty() || dispatch.template_name == filter.template_name) &&
                          (filter.op.empty() || dispatch.low_key.rfind(filter.op + ".", 0) == 0);
      if (!wanted) continue;
      out << dispatch_line(dispatch).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
      ++written.dispatch_rules;
    }
  if (!out) throw StorageError("cannot write the export of " + path());
  return written;
}

Database::JsonlCounts Database::import_jsonl(std::istream& in, const RecordCheck& check,
                                             const DispatchCheck& check_dispatch) {
  impl_->require_writable();
  // Every line read and checked before the one transaction that stores them, so that a server
  // that goes away meanwhile can be given the whole import again.
  std::vector<std::pair<std::size_t, TuningRecord>> numbered;
  std::vector<DispatchRecord> dispatches;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const auto json = nlohmann::json::parse(line);
      if (is_dispatch_line(json)) {
        DispatchRecord dispatch = dispatch_from_line(json);
        if (check_dispatch) check_dispatch(dispatch);
        dispatches.push_back(std::move(dispatch));
        continue;
      }
      TuningRecord record = record_from_json(json);
      if (check) check(record);
      numbered.emplace_back(number, std::move(record));
    } catch (const nlohmann::json::exception& error) {
      throw DatabaseError("line " + std::to_string(number) + ": not valid JSON (" + error.what() + ")");
    } catch (const std::invalid_argument& error) {
      throw DatabaseError("line " + std::to_string(number) + ": " + error.what());
    }
  }
  if (in.bad()) throw DatabaseError("cannot read the records to import into " + path());
  return impl_->run([&] {
    Transaction transaction(*impl_->connection);
    RecordWriter writer(*impl_->connection);
    JsonlCounts added;
    for (const auto& [number, record] : numbered) {
      try {
        if (writer.write(record) != 0) ++added.records;
      } catch (const StorageError&) {
        throw;  // the disk or the server, not the line
      } catch (const DatabaseError& error) {
        throw DatabaseError("line " + std::to_string(number) + ": " + error.what());
      }
    }
    for (const auto& dispatch : dispatches)
      if (write_dispatch(*impl_->connection, dispatch) != 0) ++added.dispatch_rules;
    transaction.commit();
    return added;
  });
}

std::size_t Database::merge_from(const Database& other) {
  impl_->require_writable();
  return impl_->run([&] {
    Transaction transaction(*impl_->connection);
    RecordWriter writer(*impl_->connection);
    std::size_t added = 0;
    // A read of `other` broken by its server starts again: the records written before are then
    // skipped by their content hashes.
    other.impl_->run([&] {
      other.impl_->for_each_record(select_records() + " ORDER BY r.timestamp, r.id", WhereClause{},
                                   [&](TuningRecord&& record) {
                                     if (writer.write(record) != 0) ++added;
                                   });
    });
    // The dispatch rules too (a file of schema 6 or older shows none).
    other.impl_->run([&] { merge_dispatches(*impl_->connection, *other.impl_->connection); });
    transaction.commit();
    return added;
  });
}

std::size_t Database::prune(std::size_t keep, bool dry_run) {
  if (!dry_run) impl_->require_writable();
  // row_number() ranks within each task; ids outside all four kept sets are deleted.
  const std::string task = "workload_key, template_name, target, device_id";
  const std::string kept =
      // (the best configs by their latest successful records, as best() ranks them)
      "SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY " + task +
      " ORDER BY median_seconds, id) AS rank FROM (SELECT *, row_number() OVER (PARTITION BY " + task +
      ", config ORDER BY timestamp DESC, id DESC) AS latest FROM records WHERE error_kind = 'ok') AS latest_ok"
      " WHERE latest = 1) AS ranked_ok WHERE rank <= " +
      std::to_string(keep) +
      " UNION SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY " + task +
      " ORDER BY timestamp DESC, id DESC) AS rank FROM records WHERE is_default = 1) AS default_records WHERE rank = 1"
      // (and the latest successful record of a default config: were it measured again later, as
      // a candidate, and slower, dropping that record would leave its older, faster default
      // record as its latest, which could then outrank the best)
      " UNION SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY " + task +
      ", config ORDER BY timestamp DESC, id DESC) AS latest FROM records WHERE error_kind = 'ok' AND config IN"
      " (SELECT config FROM records WHERE is_default = 1)) AS default_configs WHERE latest = 1"
      " UNION SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY " + task +
      ", config ORDER BY timestamp DESC, id DESC) AS rank FROM records WHERE error_kind <> 'ok') AS failures"
      " WHERE rank = 1"
      // (the latest winner mark, and its config's latest success: the winner best() stands by)
      " UNION SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY " + task +
      " ORDER BY timestamp DESC, id DESC) AS rank FROM records WHERE winner = 1) AS marks WHERE rank = 1"
      " UNION SELECT id FROM (SELECT r.id, row_number() OVER (PARTITION BY r.workload_key, r.template_name, r.target,"
      " r.device_id ORDER BY r.timestamp DESC, r.id DESC) AS latest FROM records r JOIN (SELECT * FROM (SELECT"
      " workload_key, template_name, target, device_id, config, row_number() OVER (PARTITION BY " + task +
      " ORDER BY timestamp DESC, id DESC) AS rank FROM records WHERE winner = 1) AS all_marks WHERE rank = 1) w USING"
      " (workload_key, template_name, target, device_id, config) WHERE r.error_kind = 'ok') AS winner_successes"
      " WHERE latest = 1";
  return impl_->run([&] {
    Transaction transaction(*impl_->connection);
    const auto doomed = static_cast<std::size_t>(
        impl_->connection->query_int("SELECT count(*) FROM records WHERE id NOT IN (" + kept + ")"));
    if (dry_run) return doomed;
    impl_->connection->execute("DELETE FROM records WHERE id NOT IN (" + kept + ")");
    transaction.commit();
    return doomed;
  });
}

void Database::compact() {
  impl_->require_writable();
  impl_->run([&] { impl_->connection->execute("VACUUM"); });
}

std::string Database::integrity_check() const {
  return impl_->run([&] { return impl_->connection->integrity_check(); });
}

}  // namespace optune::db
