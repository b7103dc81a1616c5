// A kernel template for tests whose single knob picks how its candidate behaves: computes the
// right GEMM, computes a wrong one, crashes, aborts, hangs, or fails to compile. It exercises the
// real builder, worker process and tuning loop with every outcome a real candidate can have.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "optune/backends/cpu/cpu_device.hpp"
#include "optune/backends/registry.hpp"
#include "optune/kernels/kernel_template.hpp"
#include "optune/measure/measure_input.hpp"

namespace optune::testing {

class BehaviourTemplate final : public kernels::KernelTemplate {
 public:
  // The behaviours of the space. Beyond the default seven, a candidate may also leave something
  // behind in the worker: "fork" (a child that outlives it, holding the worker's descriptors) and
  // "leak" (a descriptor opened per run and never closed); both compute the right GEMM.
  explicit BehaviourTemplate(std::vector<std::string> behaviours = {"correct", "wrong", "segfault", "abort", "hang",
                                                                    "syntax", "partial"})
      : behaviours_(std::move(behaviours)) {}

  std::string name() const override { return "gemm.behaviour_test"; }
  kernels::Op op() const override { return kernels::Op::kGemm; }
  std::string_view backend() const override { return "cpu"; }

  search_space::ConfigSpace space(const kernels::Workload&, const kernels::DeviceInfo&) const override {
    search_space::ConfigSpace space;
    space.add(search_space::ChoiceKnob{"behaviour", behaviours_});
    return space;
  }

  search_space::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                                      const search_space::ConfigSpace& space) const override {
    return space.from_json({{"behaviour", "correct"}});
  }

  std::string emit_source(const kernels::Workload& workload, const kernels::DeviceInfo&,
                          const search_space::ConfigView& config) const override {
    const auto& shape = workload.gemm();
    const std::string& behaviour = config.choice("behaviour");
    std::string body;
    if (behaviour == "correct" || behaviour == "wrong" || behaviour == "partial" || behaviour == "fork" ||
        behaviour == "leak") {
      std::string scale = behaviour == "wrong" ? "1.01f" : "1.0f";
      std::string rows = behaviour == "partial" ? "M - 1" : "M";  // leaves the last row unwritten
      body = "for (long i = 0; i < " + rows + "; ++i) for (long j = 0; j < N; ++j) { double s = 0;"
             " for (long k = 0; k < K; ++k) s += (double)a[i*K+k] * b[k*N+j]; c[i*N+j] = " + scale + " * (float)s; }";
      if (behaviour == "fork") body += " static bool forked = false; if (!forked && fork() == 0) { sleep(30); _exit(0); } forked = true;";
      if (behaviour == "leak") body += " open(\"/dev/null\", O_RDONLY);";
    } else if (behaviour == "segfault") {
      body = "*(volatile int*)nullptr = 1;";
    } else if (behaviour == "abort") {
      body = "std::abort();";
    } else if (behaviour == "hang") {
      body = "for (volatile long spin = 0;; spin = spin + 1) {}";
    } else {
      body = "this is not C++;";
    }
    return "#include <cstdlib>\n#include <fcntl.h>\n#include <unistd.h>\n"
           "static const long M = " + std::to_string(shape.M) + ", N = " + std::to_string(shape.N) +
           ", K = " + std::to_string(shape.K) + ";\n"
           "extern \"C\" void optune_kernel(const float* const* in, float* c) {\n"
           "  const float* a = in[0]; const float* b = in[1]; (void)a; (void)b; (void)c;\n  " + body + "\n}\n";
  }

 private:
  std::vector<std::string> behaviours_;
};

// A task of `behaviour` on this machine's CPU: a GEMM of `shape`.
inline std::shared_ptr<measure::MeasureTask> behaviour_task(const BehaviourTemplate& behaviour,
                                                            const std::string& shape = "33,17,9") {
  auto task = std::make_shared<measure::MeasureTask>();
  task->workload = kernels::parse_workload(kernels::Op::kGemm, shape);
  task->kernel_template = &behaviour;
  task->target = backends::parse_target("cpu");
  task->device = measure::detect_local_cpu();
  task->space = behaviour.space(task->workload, task->device);
  return task;
}

}  // namespace optune::testing
