// The header `optune apply-best` writes for build-time consumption: for one target and device,
// per template with a build-time form, a constexpr table of the best recorded config of every
// workload (CLBlast-style: plain, readable rows), a row for each untuned workload the application
// lists with the config of its nearest tuned shape, a row per leaf of each measured dispatch of a
// shape range (optune dispatch) holding the leaf's box of shapes (tables whose rows hold one shape
// each, OpenCL's, get a row per listed shape of the range instead), and the template's default
// config for shapes without a row. Applications dispatch through it (e.g. kernels/cpu/tuned_gemm.hpp).
#pragma once

#include <string>
#include <vector>

#include "optune/db/database.hpp"
#include "optune/kernels/device_info.hpp"
#include "optune/kernels/target.hpp"

namespace optune::tuner {

struct TunedHeaderRequest {
  kernels::Target target;
  std::string device;                       // id or name substring; "" = the only device recorded
  std::vector<std::string> wanted;          // workload keys the application uses (may be empty)
  kernels::DeviceInfo fallback_device;      // whose defaults to write when nothing is recorded
  std::string source;                       // named in the header's first comment
};

struct TunedHeader {
  std::string text;
  std::size_t tuned = 0;                    // rows written
  // Wanted workloads never tuned: held by a measured dispatch's leaf, with a row of their nearest
  // tuned shape's config (nearest_config.hpp), or without a row (nothing of their template tuned
  // here): the default.
  std::vector<std::string> dispatched;
  std::vector<std::string> nearest;
  std::vector<std::string> untuned;
  std::size_t range_rows = 0;  // rows of dispatch leaves, each holding a box of shapes
  // Records passed over because they fail RecordCheck::figures() (forged or corrupted), each
  // "<workload key>: <problem>", and dispatch rules that cannot be read ("dispatch rule <id>: ..."):
  // the header is made from the others.
  std::vector<std::string> passed_over;
  // Rows whose record is noisy (db::TuningRecord::is_noisy), each "<workload key>: <why>".
  std::vector<std::string> noisy;
  // The record each row was made from (a nearest row's: its tuned shape's): apply-best holds
  // their toolchain to today's.
  std::vector<db::TuningRecord> row_records;
  std::string device_name;
};

// Throws std::invalid_argument when records of several devices match (naming them).
TunedHeader make_tuned_header(const db::Database& database, const TunedHeaderRequest& request);

// Writes `text` to `path` unless the file already holds exactly it (so builds that depend on the
// header do not rebuild); returns whether it wrote. Throws std::runtime_error when it cannot.
bool write_if_changed(const std::string& path, const std::string& text);

}  // namespace optune::tuner
