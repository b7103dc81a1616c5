// The header of tuned configs an application compiles in (`optune apply-best`, build-time use): the
// best recorded config of every wanted workload of a target's device, a dispatch leaf, the nearest
// tuned shape's config or the default where none is tuned; written only when its text changes.
#pragma once

#include <string>
#include <vector>

#include "optune/app/install_paths.hpp"
#include "optune/measure/builder.hpp"
#include "optune/tuner/results/tuned_header.hpp"

namespace optune::app {

struct ApplyBestRequest {
  std::string database;
  std::string target = "cpu";
  std::string device;                  // "" the one recorded; else an id or part of its name
  std::vector<std::string> workloads;  // keys the application uses
  std::string suite;                   // or a suite file listing them
  std::string layout;                  // replaces the suite's kept layout ("" keeps it)
  std::string compiler = "c++";        // today's, as tune's --compiler: the rows' records are held to its toolchain
};

struct AppliedTable {
  tuner::TunedHeader header;
  std::string target;  // canonical
  // Rows of this machine's device whose records another (or an unknown) toolchain built than
  // today's: how many of how many, and one of them with its difference. Empty where this machine
  // has no device of the target.
  std::size_t other_toolchain_rows = 0;
  std::size_t device_rows = 0;
  std::string other_toolchain_example;
};

// BadInput for a malformed target, workload key, suite or database, a wanted workload that no
// template of the target's device runs, or one its template has no table of the dtype for.
AppliedTable apply_best(const ApplyBestRequest& request, const InstallPaths& paths);

// Writes `text` to `path` unless the file already holds exactly it (so builds that depend on the
// header do not rebuild); returns whether it wrote. Throws std::runtime_error when it cannot.
bool write_if_changed(const std::string& path, const std::string& text);

}  // namespace optune::app
