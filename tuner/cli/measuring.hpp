// The measuring parts of a command that measures (tune, job run, regress): the library's
// (optune/app/measuring.hpp), made with this installation's paths and with the RPC runner's lines
// going to stderr.
#pragma once

#include <optional>

#include "cli_support.hpp"
#include "optune/app/measuring.hpp"
#include "rpc_support.hpp"

namespace optune::cli {

using app::MeasureSettings;
using app::Remote;
using app::find_remote;

struct Measuring : app::Measuring {
  explicit Measuring(const MeasureSettings& settings, const std::optional<Remote>& remote = std::nullopt);
};

}  // namespace optune::cli
