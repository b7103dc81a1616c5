// The plot of one task's trials (task_trials.hpp) as inline SVG, for the HTML report: every record
// a point at its trial number (a trial a dot, a measurement of the default config a square, a
// re-measurement a diamond, a record that is not ok a cross in a strip under the axis, coloured by
// its error kind), the best so far as a step line, the default config's figure as a labelled
// horizontal line, and both axes with tick labels and units.
#pragma once

#include <cstdint>
#include <string>

#include "results/task_trials.hpp"

namespace optune::tuner {

// `headline`: the id of the record whose figure the report gives as the task's best, ringed; 0: none.
std::string trial_plot(const TaskTrials& task, std::int64_t headline = 0);

// The colour of an error kind's crosses, which the report's table of them repeats.
const char* error_kind_colour(const std::string& kind);

}  // namespace optune::tuner
