// One rule for every front end on what went wrong: the user's input (a malformed shape, target,
// file or database: the command line exits 2 and says "error", Python raises optune.BadInput) or
// the run itself (a full disk, a broken environment: exit 1 and "failed", Python's RuntimeError).
#pragma once

#include <exception>

namespace optune::app {

enum class FailureKind { kBadInput, kRunFailed };

FailureKind failure_kind(const std::exception& error);

}  // namespace optune::app
