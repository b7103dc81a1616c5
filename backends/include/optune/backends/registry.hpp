// The backends this build of optune has (the CPU always; OpenCL unless built with
// -DOPTUNE_OPENCL=OFF), listed once in registry.cpp, and what the rest of optune asks of them
// without naming any: targets, devices, templates, builders and the worker's side.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/kernel_template.hpp"
#include "optune/kernels/target.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/measure/backend.hpp"
#include "optune/measure/worker_backend.hpp"

namespace optune::backends {

const std::vector<const measure::Backend*>& all_backends();
// Throws std::invalid_argument naming the backends there are.
const measure::Backend& find_backend(std::string_view name);
// Every backend's worker side, for optune-worker.
std::vector<std::unique_ptr<measure::WorkerBackend>> make_workers();

// A target's canonical form; throws std::invalid_argument "target: ..." naming every backend's
// forms when no backend reads it.
kernels::Target parse_target(std::string_view text);
std::string target_forms();  // "cpu, cpu:<triple>, opencl, ...": for help texts

// This machine's device of a target; throws std::invalid_argument.
kernels::DeviceInfo find_device(const kernels::Target& target);
// Every device of this machine, backend by backend (the CPU first).
std::vector<measure::TargetDevice> local_devices();

std::vector<const kernels::KernelTemplate*> all_templates();
// The template of an op on a backend; throws std::invalid_argument naming op and backend.
const kernels::KernelTemplate& find_template(kernels::Op op, std::string_view backend);

}  // namespace optune::backends
