// Database: where every measurement is kept. Two engines behind one interface: a SQLite file, the
// embedded default for one machine (DESIGN.md: one file, WAL mode, schema version stored,
// forward-only migrations; one process writes while others read), and a PostgreSQL server, a
// team's shared store (many writers on many machines, readers never blocked). Both have the same
// schema versions and the same rules: all writes are transactions, so an interrupted run never
// leaves a half-written batch; the latest record of a config counts; a record stored twice is kept
// once (by content hash).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "optune/db/dispatch_record.hpp"
#include "optune/db/tuning_record.hpp"

namespace optune::db {

// The program's own failures with the database (unreadable file, not an SQLite database, newer
// schema than this optune knows): the command line turns them into exit code 2.
class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The storage failed a write: the disk is full, a file-size limit is reached, an I/O error
// (SQLite's SQLITE_FULL and SQLITE_IOERR), or another process held the database locked past the
// busy timeout (SQLITE_BUSY, SQLITE_LOCKED). A failure of the run, not bad input: the command line
// turns it into exit code 1. The transaction under way is rolled back, as for any DatabaseError.
class StorageError : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

inline constexpr int kSchemaVersion = 8;

// How long a database on a server that went away (a restart, a dropped network) is retried before
// the operation fails with StorageError.
inline constexpr std::chrono::seconds kDefaultReconnectFor{60};

// Whether `location` names a PostgreSQL server rather than a SQLite file: a postgresql:// or
// postgres:// URI, or a libpq keyword string ("service=team", "host=db dbname=optune").
bool is_server_uri(const std::string& location);

// Identifies one tuning task's records: a template on a workload for a target and device.
struct TaskKey {
  std::string workload_key;
  std::string template_name;
  std::string target;
  std::string device_id;
};

struct RecordFilter {
  std::string op;            // "" any; else the workload key's op prefix ("gemm", "conv2d", ...)
  std::string workload_key;  // "" any; else exact
  std::string target;        // "" any; else exact target string
  std::string device;        // "" any; else a device id, or a substring of the device name
  std::string template_name; // "" any
  double since = 0;          // unix seconds; records at or after
  bool ok_only = false;
};

class Database {
 public:
  enum class Mode { kReadWrite, kReadOnly };
  // Opens or (kReadWrite) creates the file, enables WAL, creates or migrates the schema; or, for
  // a server URI, connects (credentials the libpq way: ~/.pgpass, PGPASSFILE, service files;
  // a URI holding a password is refused) and creates or migrates the schema there. A server that
  // goes away later is reconnected for up to `reconnect_for` and the operation under way run
  // again. Throws DatabaseError with a one-line message: not a database, newer schema, unwritable
  // path, malformed URI, refused login, unreachable server.
  static Database open(const std::string& location, Mode mode = Mode::kReadWrite,
                       std::chrono::seconds reconnect_for = kDefaultReconnectFor);
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  int schema_version() const;
  // The file's path or the server's URI.
  const std::string& path() const;

  // Inserts in one transaction and returns the ids. Records identical in every field but id to
  // one already stored are skipped (id 0 returned for them), which makes import and merge safe.
  std::vector<std::int64_t> insert(const std::vector<TuningRecord>& records);

  // Best successful record of a task (lowest median); nullopt when it has none. A config measured
  // more than once counts with its latest successful record: the tuner's closing re-measure of
  // its finalists (and the default) supersedes a lucky first measurement on a noisy machine.
  // Where a final comparison declared a winner (TuningRecord::winner), the winner's config stays
  // the best until a config displaces it (db::displaces_winner: measured later, on a quiet machine,
  // faster beyond noise); best() then gives the winner's latest successful record.
  std::optional<TuningRecord> best(const TaskKey& task) const;
  // Successful records matching the filter, best first, at most k per workload key and target
  // and device, one per config, its latest, ranked as best() ranks them: by median, with the
  // latest declared winner of each (any template's) kept first unless displaced (k = 0: every
  // record, by median).
  std::vector<TuningRecord> top_k(const RecordFilter& filter, std::size_t k) const;
  // The task's latest record that a final comparison marked as its winner; nullopt when none.
  std::optional<TuningRecord> winner(const TaskKey& task) const;
  // The latest successful record of one config (config_text()) of a task: the record best() and
  // top_k() count it by. nullopt when the config never succeeded.
  std::optional<TuningRecord> latest_success(const TaskKey& task, const std::string& config_text) const;
  // All matching records, oldest first (history).
  std::vector<TuningRecord> records(const RecordFilter& filter) const;
  std::vector<TuningRecord> task_records(const TaskKey& task) const;
  // config_text() of every config of the task that has been measured, failed ones included; a
  // transport failure (TuningRecord::is_transport_failure) measured nothing of its config.
  std::unordered_set<std::string> measured_configs(const TaskKey& task) const;
  bool is_measured(const TaskKey& task, const std::string& config_text) const;
  std::size_t count() const;

  // Checks a record that comes from elsewhere before it is stored (the tuner's RecordCheck):
  // throws std::invalid_argument naming the problem.
  using RecordCheck = std::function<void(const TuningRecord&)>;

  // Checks a dispatch rule that comes from elsewhere (the tuner reads its rule and range): throws
  // std::invalid_argument naming the problem.
  using DispatchCheck = std::function<void(const DispatchRecord&)>;

  // What an export wrote, or an import added (new ones only).
  struct JsonlCounts {
    std::size_t records = 0;
    std::size_t dispatch_rules = 0;
  };
  // JSON lines, one record per line, then one dispatch rule per line (dispatch_line(): those of
  // the filter's target, op and template whose device has a record exported; none when the filter
  // names one workload). A stream that fails a write: StorageError. A malformed line, or one that
  // `check` or `check_dispatch` rejects, throws DatabaseError naming the line number, and nothing
  // of that import is kept.
  JsonlCounts export_jsonl(std::ostream& out, const RecordFilter& filter) const;
  JsonlCounts import_jsonl(std::istream& in, const RecordCheck& check = {}, const DispatchCheck& check_dispatch = {});

  // Adds every record and dispatch rule of `other` not already stored (same content hash), in one
  // transaction; returns how many records were new. Nothing of either database is lost.
  std::size_t merge_from(const Database& other);

  // Stores a shape range's dispatch rule (in its own transaction) and returns its id; 0 when an
  // identical one is stored already.
  std::int64_t insert_dispatch(const DispatchRecord& dispatch);
  // The rule in force of each range of `target` (every target when ""), on the device whose id
  // is `device_id` (every device when ""): its latest; newest first.
  std::vector<DispatchRecord> dispatches(const std::string& target, const std::string& device_id) const;

  // Deletes all but the records worth keeping, in one transaction, and returns how many went
  // (with dry_run: how many would go, nothing deleted). Kept per task (workload, template,
  // target, device): the `keep` best successful records, the most recent default-config record
  // (the "default" of regress and report), the most recent winner mark and its config's latest
  // success (so the best stays the best), and the most recent record of every config that
  // failed, so a resumed tuning run still skips configs known to crash, hang or be wrong.
  std::size_t prune(std::size_t keep, bool dry_run = false);
  // Gives the space of deleted rows back (VACUUM); not inside a transaction.
  void compact();
  // "ok" or SQLite's list of problems (PRAGMA integrity_check); a server checks its own pages.
  std::string integrity_check() const;

 private:
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace optune::db
