// The backend conformance suite: what every registered backend must do, checked the same way for
// each through its real builder, its side of optune-worker and the runner. Each backend keeps a
// kernel file in backends/<name>/conformance/behaviour.toml whose knob MODE picks how a candidate
// behaves (right, wrong, crashing, hanging, not compiling, writing past its output, leaving an
// element unwritten); each behaviour must become its record, and a right candidate measured after
// all of them must still be right. Devices must have one fingerprint on the host and in the
// worker; launch limits must make configs invalid; bad targets are std::invalid_argument.
// A backend with no device here (CUDA without a GPU) skips what needs one: the GPU run is
// backends/cuda/tests/pack_gpu_cuda.sh.
#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "optune/app/install_paths.hpp"
#include "optune/app/measuring.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_file_template.hpp"
#include "optune/measure/local_runner.hpp"

namespace {

namespace fs = std::filesystem;
using namespace optune;
using measure::ErrorKind;

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto* backend : backends::all_backends()) names.emplace_back(backend->name());
  return names;
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  const measure::Backend& backend() const { return backends::find_backend(GetParam()); }
  fs::path behaviour_file() const {
    return fs::path(OPTUNE_SOURCE_DIR) / "backends" / GetParam() / "conformance" / "behaviour.toml";
  }
  std::string worker() const { return std::string(OPTUNE_BINARY_DIR) + "/bin/optune-worker"; }

  // The task of the behaviour file on the backend's first device here, or nullptr when it has none.
  std::shared_ptr<measure::MeasureTask> behaviour_task() const {
    const auto devices = backend().devices();
    if (devices.empty()) return nullptr;
    auto task = std::make_shared<measure::MeasureTask>();
    task->owned_template = backend().kernel_file_template(backends::load_kernel_file(behaviour_file()));
    task->kernel_template = task->owned_template.get();
    task->target = devices.front().target;
    task->device = devices.front().device;
    task->workload = kernels::kernel_file_of(*task->kernel_template)->workload("", task->device);
    task->space = task->kernel_template->space(task->workload, task->device);
    return task;
  }

  // The first valid config of the space with MODE set to `mode`.
  search_space::Config with_mode(const measure::MeasureTask& task, int mode) const {
    for (std::uint64_t i = 0; i < task.space.size(); ++i) {
      const auto config = task.space.from_index(i);
      if (task.space.is_valid(config) && task.space.to_json(config).at("MODE") == mode) return config;
    }
    throw std::logic_error("no valid config of MODE " + std::to_string(mode));
  }
};

TEST_P(Conformance, HasABehaviourFileOfItsOwn) {
  if (!backend().kernel_file_traits()) GTEST_SKIP() << GetParam() << " takes no kernel files";
  ASSERT_TRUE(fs::exists(behaviour_file())) << behaviour_file();
  const kernels::KernelSpec spec = backends::load_kernel_file(behaviour_file());
  EXPECT_EQ(spec.backend, GetParam());
}

TEST_P(Conformance, BadTargetsAreInvalidArguments) {
  try {
    backends::parse_target(GetParam() + ":x:");
    ADD_FAILURE() << "a spec ending in ':' was read";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()).rfind("target", 0), 0u) << error.what();
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
  }
  // A device no machine here has (a remote CPU, the 99th platform, the 99th GPU).
  EXPECT_THROW(backend().device(kernels::Target{GetParam(), backend().canonical_spec("99")}), std::invalid_argument);
}

TEST_P(Conformance, DevicesHaveOneFingerprintOnTheHostAndInTheWorker) {
  const auto devices = backend().devices();
  if (devices.empty()) GTEST_SKIP() << "no " << GetParam() << " device here";
  measure::LocalRunnerOptions options;
  options.worker_path = worker();
  measure::LocalRunner runner(options);
  for (const auto& [target, device] : devices) {
    EXPECT_EQ(target.backend, GetParam());
    EXPECT_EQ(device.kind, GetParam());
    EXPECT_EQ(backend().canonical_spec(target.spec), target.spec) << target.str();
    EXPECT_EQ(backends::find_device(target).fingerprint_id(), device.fingerprint_id()) << target.str();
    EXPECT_EQ(runner.describe_device(target.str()).fingerprint_id(), device.fingerprint_id()) << target.str();
    EXPECT_FALSE(backend().details(device).empty());
  }
}

TEST_P(Conformance, LaunchLimitsMakeConfigsInvalid) {
  const auto* traits = backend().kernel_file_traits();
  if (!traits || traits->launch == kernels::LaunchModel::kCall) GTEST_SKIP() << GetParam() << " has no launch sizes";
  const auto task = behaviour_task();
  if (!task) GTEST_SKIP() << "no " << GetParam() << " device here";
  std::size_t too_large = 0;
  for (std::uint64_t i = 0; i < task->space.size(); ++i) {
    const auto config = task->space.from_index(i);
    const auto values = task->space.to_json(config);
    for (const auto& [knob, value] : values.items()) {
      if (value != 1048576) continue;
      ++too_large;
      EXPECT_FALSE(task->space.is_valid(config)) << values.dump();
      EXPECT_FALSE(task->space.first_violation(config).empty()) << values.dump();
    }
  }
  EXPECT_GT(too_large, 0u) << "the behaviour file has no work-group of 1048576 to refuse";
}

TEST_P(Conformance, EveryBehaviourBecomesItsRecordAndTheWorkerStaysUsable) {
  const auto task = behaviour_task();
  if (!task) GTEST_SKIP() << "no " << GetParam() << " device here";
  app::MeasureSettings settings;
  settings.target = task->target.str();
  settings.timing = {.warmup = 1, .number = 1, .repeat = 2, .min_repeat_ms = 1, .timeout_seconds = 5};
  settings.build.compile_timeout = 60;
  const fs::path cache = fs::temp_directory_path() / ("optune_conformance_" + GetParam() + std::to_string(::getpid()));
  app::Measuring measuring(settings, app::install_paths_beside(std::string(OPTUNE_BINARY_DIR) + "/bin", cache.string()),
                           std::nullopt);
  // Right first and last: a crash, hang or fault between them must not leave the worker broken.
  const std::vector<int> modes = {0, 1, 2, 3, 4, 5, 6, 0};
  std::vector<measure::MeasureInput> inputs;
  for (int mode : modes) inputs.push_back({task, with_mode(*task, mode)});
  const auto builds = measuring.builder->build(inputs);
  const auto results = measuring.runner.run(inputs, builds);
  fs::remove_all(cache);
  ASSERT_EQ(results.size(), modes.size());
  auto kind_of = [&](std::size_t i) { return std::string(measure::error_kind_name(results[i].error)); };
  const std::map<int, std::vector<std::string>> expected = {
      {0, {"ok"}},
      {1, {"wrong_answer"}},
      {2, {"crash", "runtime_error"}},  // a process killed by a signal, or a device fault reported
      {3, {"timeout"}},
      {4, {"build_error"}},
      {5, {"wrong_answer"}},
      {6, {"wrong_answer"}},
  };
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const auto& allowed = expected.at(modes[i]);
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), kind_of(i)), allowed.end())
        << GetParam() << " MODE " << modes[i] << ": " << kind_of(i) << ": " << results[i].message;
  }
  for (std::size_t i : {std::size_t{0}, modes.size() - 1}) {
    EXPECT_GT(results[i].median_seconds, 0) << i;
    EXPECT_FALSE(results[i].costs.empty()) << i;
  }
  EXPECT_NE(results[4].message.find("MODE 4 does not compile"), std::string::npos) << results[4].message;
}

INSTANTIATE_TEST_SUITE_P(Registered, Conformance, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
