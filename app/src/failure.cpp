#include "optune/app/failure.hpp"

#include <stdexcept>

#include "optune/app/bad_input.hpp"
#include "optune/db/database.hpp"

namespace optune::app {

FailureKind failure_kind(const std::exception& error) {
  if (dynamic_cast<const BadInput*>(&error)) return FailureKind::kBadInput;
  // A database that cannot take a write (a full disk) failed the run; the input was fine.
  if (dynamic_cast<const db::StorageError*>(&error)) return FailureKind::kRunFailed;
  if (dynamic_cast<const db::DatabaseError*>(&error)) return FailureKind::kBadInput;  // not a database, a newer schema
  if (dynamic_cast<const std::invalid_argument*>(&error)) return FailureKind::kBadInput;
  return FailureKind::kRunFailed;
}

}  // namespace optune::app
