// Whether a tuned record was built by another toolchain than today's builder uses (a new compiler,
// other flags, another driver or NVRTC): a table tuned under one may be slower, or wrong, under
// the next. `regress` says so beside its verdict.
#pragma once

#include <string>

#include "optune/db/tuning_record.hpp"
#include "optune/measure/builder.hpp"

namespace optune::tuner {

// "" when the record's toolchain is today's, or unknown (a record of schema 5 or older); else what
// changed: "compiler c++ (Debian 12.2.0-14) 12.2.0, now clang version 14.0.6" and/or "flags ...".
std::string toolchain_change(const db::TuningRecord& record, const measure::Toolchain& now);

}  // namespace optune::tuner
