// The [[workload]] tables of a TOML file, as suite files and job files write them (format in
// optune/tuner/scheduling/suite.hpp). Private to the tuner library, so toml++ stays out of public headers.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "optune/kernels/one_line.hpp"
#include "optune/tuner/scheduling/suite.hpp"

namespace optune::tuner {

// The root's [[workload]] tables; throws SuiteError naming source, line and problem (none given,
// unknown key, duplicate name or workload, bad shape or layout). `layout`: the layout block of
// convolutions that name none (kernels::kLayoutNchw: NCHW); `dtype`, where given, replaces the
// root's `dtype` for the workloads that name none.
std::vector<SuiteEntry> parse_workload_tables(const toml::table& root, const std::string& source,
                                              int layout = kernels::kLayoutNchw,
                                              std::optional<kernels::DataType> dtype = std::nullopt);

// An error message about a file, as one line: the file's own text in it (a quoted value holding a
// newline, the character toml++ saw) has its control characters written as escapes ("\n").
using kernels::one_line;

}  // namespace optune::tuner
