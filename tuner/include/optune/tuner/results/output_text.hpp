// How counts and ratios read wherever optune shows them (the command's lines and tables, the HTML
// report, the reasons of regress's and revalidate's verdicts), so that every front end words them
// alike: "1 record" and "2 records", and a speed-up as "1.23x" (how many times faster), never a
// time ratio in one place and a speed-up in another.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace optune::tuner {

// "1 record", "0 records", "2 records": the noun in the plural unless the count is 1. `plural`
// where adding an "s" is wrong ("batch", "batches"); "" adds the "s".
std::string counted(std::size_t count, std::string_view noun, std::string_view plural = "");

// A speed-up: how many times faster a config runs than a reference (the reference's seconds over
// its own), "1.23x"; under 1 it is slower ("0.83x"). "-" for a ratio that is not a positive number.
std::string speedup_text(double speedup);
// The speed-up of `seconds` over `reference_seconds`, as speedup_text() words it.
std::string speedup_text(double reference_seconds, double seconds);
// A speed-up with its interval: "1.23x (1.20x to 1.26x)".
std::string speedup_interval_text(double speedup, double low, double high);

}  // namespace optune::tuner
