// What the catalog's entries share: the one-line errors of a bad shape and the checks of a
// single extent, used by the entries and by workload.cpp's parsers alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "optune/kernels/workload.hpp"

namespace optune::kernels {

// Throws std::invalid_argument "<context>: <what>": "shape: ..." for `--shape` and hand-built
// workloads, "workload key: ..." for keys.
[[noreturn]] void fail(std::string_view context, const std::string& what);

// Every extent is >= 1 except pad (>= 0), and none is beyond kMaxExtent. `text` is the extent as
// written (nullopt `value`: not an integer), quoted in the message.
void check_extent(std::string_view name, std::optional<std::int64_t> value, std::string_view text,
                  std::string_view context);
void check_extent(std::string_view name, std::int64_t value, std::string_view context);

// Only conv2d may read an NCHW input while writing a blocked layout (a network's first layer);
// the other operators call this when `nchw_input` is set.
[[noreturn]] void reject_nchw_input(const Workload& workload, std::string_view context);

// A feature of an extent: log2 of it (of 1 for anything below 1).
float log2_extent(std::int64_t extent);

}  // namespace optune::kernels
