// The HTML report's section of one measured dispatch (`optune dispatch`): its leaves, the
// configs x shapes matrix it was fitted to and its held-out checks, as the stored rule keeps them.
#pragma once

#include <string>

#include "optune/db/dispatch_record.hpp"

namespace optune::tuner {

// Throws nlohmann::json::exception where the rule is not what optune dispatch stores.
std::string dispatch_section(const db::DispatchRecord& dispatch);

}  // namespace optune::tuner
