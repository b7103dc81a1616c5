// How counts and ratios read in what a front end prints: the library's own words
// (tuner/results/output_text.hpp: "1 record", "2 records", a speed-up as "1.23x"), so that the
// command line, Python and the report word them alike.
#pragma once

#include "optune/tuner/results/output_text.hpp"

namespace optune::app {

using tuner::counted;
using tuner::speedup_interval_text;
using tuner::speedup_text;

}  // namespace optune::app
