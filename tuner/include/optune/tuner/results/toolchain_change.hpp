// Whether a tuned record was built by another toolchain than today's builder uses (a new compiler,
// other flags, another driver or NVRTC, another optune version): a table tuned under one may be
// slower, or wrong, under the next. `regress` and `apply-best` say so; `revalidate` re-measures such records.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "optune/db/tuning_record.hpp"
#include "optune/measure/builder.hpp"

namespace optune::tuner {

// "" when the record's toolchain is today's, or unknown (a record of schema 5 or older); else what
// changed: "compiler c++ (Debian 12.2.0-14) 12.2.0, now clang version 14.0.6" and/or "flags ..."
// and/or "optune 0.1.0, now 0.2.0" (a record that names its optune version).
std::string toolchain_change(const db::TuningRecord& record, const measure::Toolchain& now);

// A record's toolchain against today's. Unknown: the record does not say (schema 5 or older, an
// import without it), or today's builder cannot tell; either way nothing vouches that the record
// holds today.
enum class ToolchainMatch { kSame, kChanged, kUnknown };
ToolchainMatch match_toolchain(const db::TuningRecord& record, const measure::Toolchain& now);

// The change as one line: toolchain_change's text, or "toolchain unknown (recorded before schema
// 6)" / "today's toolchain unknown"; "" when the same.
std::string toolchain_difference(const db::TuningRecord& record, const measure::Toolchain& now);

// A toolchain as records keep it (db::TuningRecord::toolchain): {"compiler", "flags"}; null where
// the builder cannot tell.
nlohmann::json toolchain_json(const measure::Toolchain& toolchain);

}  // namespace optune::tuner
