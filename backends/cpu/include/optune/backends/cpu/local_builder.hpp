// LocalBuilder: compiles each candidate's emitted source into a shared object with the configured
// compiler (a cross compiler too), on all cores in parallel, each compile under a timeout. A
// candidate whose compile (source and command) is one it has built before, in this batch or an
// earlier one, reuses that object: the closing re-measurements of a run, the probes of a failing
// batch and configs that differ only in what their template passes at run time compile nothing.
// Compile errors and timeouts become build_error results carrying the compiler's output. A kernel
// file's candidate that builds only without its check reference is a reference_error result (the
// file's fault). A failure of the environment is no result: a build folder that cannot be written,
// a compiler that cannot start, fails without a message or for want of disk space throws
// EnvironmentFailure, however few candidates of the batch it hit. A template's kernel header is
// compiled once per command into a precompiled header its candidates then read
// (backends/cpu/src/precompiled_headers.hpp).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optune/measure/build_directory.hpp"
#include "optune/measure/builder.hpp"

namespace optune::measure {

struct LocalBuilderOptions {
  std::string compiler = "c++";
  std::vector<std::string> flags = {"-std=c++20", "-O3", "-march=native", "-fopenmp", "-fPIC",
                                    "-shared"};
  std::vector<std::string> include_dirs;  // must contain optune/kernels/... headers
  int jobs = 0;                           // parallel compiles; 0 = all cores
  double timeout_seconds = 120;           // per compile
  std::string work_dir;                   // where sources and objects go; "" = a fresh temp dir
  bool keep_sources = false;              // keep .cpp files next to the objects (debugging)
  bool precompiled_headers = true;        // false: every candidate parses its headers (the A/B's before)
};

class PrecompiledHeaders;

// Shared objects a LocalBuilder keeps for reuse (a few MB of a run's build folder).
inline constexpr std::size_t kMaxKeptObjects = 256;

class LocalBuilder final : public Builder {
 public:
  explicit LocalBuilder(LocalBuilderOptions options);
  ~LocalBuilder() override;
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override;
  // The compiler's name and the first line of its --version (asked once), and the builder's flags.
  Toolchain toolchain(const kernels::DeviceInfo& device) const override;
  const std::string& work_dir() const { return work_dir_.path(); }

 private:
  LocalBuilderOptions options_;
  BuildDirectory work_dir_;
  std::size_t next_id_ = 0;
  // Objects built so far by their compile (command and source), oldest first in `built_order_`:
  // at most kMaxKeptObjects are kept, the oldest removed at the start of a batch.
  std::map<std::string, std::string> built_;
  std::deque<std::string> built_order_;
  mutable std::optional<std::string> compiler_version_;
  std::unique_ptr<PrecompiledHeaders> headers_;
  void forget_oldest_objects();
};

}  // namespace optune::measure
