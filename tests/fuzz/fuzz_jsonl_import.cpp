// `optune import`: JSON lines from another machine, into a fresh in-memory database. Input: the
// file's bytes. Promises: a bad file is a DatabaseError naming its line and leaves the database
// as it was (empty); a good one adds records that export gives back.
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "optune/db/database.hpp"

using namespace optune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto database = db::Database::open(":memory:", db::Database::Mode::kReadWrite);
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::size_t added = 0;
  try {
    added = database.import_jsonl(in).records;
  } catch (const db::DatabaseError& error) {
    const std::string message = error.what();
    if (message.find("line ") == std::string::npos || message.find('\n') != std::string::npos)
      optune::fuzz::broken("an import error that is not one line naming its line: " + message);
    if (database.count() != 0) optune::fuzz::broken("a rejected import left records behind");
    return 0;
  }
  if (database.count() != added) optune::fuzz::broken("import counted other records than it stored");
  std::ostringstream out;
  if (database.export_jsonl(out, {}).records != added) optune::fuzz::broken("export gives back other records than imported");
  return 0;
}
