// The backends this build of optune has (the CPU always; OpenCL unless built with
// -DOPTUNE_OPENCL=OFF), in the list backends/CMakeLists.txt generates, and what the rest of optune
// asks of them without naming any: targets, devices, templates, builders and the worker's side.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "optune/kernels/kernel_file.hpp"
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
// The devices a tune's target names: one, or several of a backend that measures devices at once
// ("cuda:all": every device of the backend here; "cuda:0,2": those), each in canonical form.
// Throws std::invalid_argument "target ...: ..." for a list of another backend, an empty or
// repeated list, or "all" where the backend has no device.
std::vector<kernels::Target> parse_targets(std::string_view text);

// This machine's device of a target; throws std::invalid_argument.
kernels::DeviceInfo find_device(const kernels::Target& target);
// How many times this process has asked a backend for a target's device. A detection can take
// seconds (OpenCL platforms load, the CUDA driver starts), so a run detects once: its tests check.
std::size_t device_detections();
// Every device of this machine, backend by backend (the CPU first).
std::vector<measure::TargetDevice> local_devices();

std::vector<const kernels::KernelTemplate*> all_templates();
// The templates of the workload's op on a backend that apply to the workload on the device,
// highest priority first (equal priorities in the backends' order).
std::vector<const kernels::KernelTemplate*> templates_for(const kernels::Workload& workload, std::string_view backend,
                                                          const kernels::DeviceInfo& device);
// The dtypes that some template of the op on the backend computes, in DataType order.
std::vector<kernels::DataType> dtypes_of(kernels::Op op, std::string_view backend);
// Throws std::invalid_argument "dtype bf16: gemm on opencl runs f32, f16" where no template of the
// workload's op on the backend computes its dtype.
void check_dtype(const kernels::Workload& workload, std::string_view backend);
// The first of templates_for: the template whose default config runs untuned, and the one a
// tuning run takes unless told otherwise. Throws std::invalid_argument naming op and backend (and
// the dtypes there are, where the workload's is none of them).
const kernels::KernelTemplate& default_template(const kernels::Workload& workload, std::string_view backend,
                                                const kernels::DeviceInfo& device);
// The template of a name ("conv2d.cpu"); throws std::invalid_argument naming the templates there are.
const kernels::KernelTemplate& find_template(std::string_view name);
// The backends of this build that take kernel files, for the parser (kernel_file.hpp).
const kernels::KernelFileBackends& kernel_file_backends();
// kernels::load_kernel_file over this build's backends: throws std::invalid_argument, one line.
kernels::KernelSpec load_kernel_file(const std::filesystem::path& path);
// The template of a user's kernel file, made by the backend the file names. Throws
// std::invalid_argument when this optune has no such backend.
std::unique_ptr<kernels::KernelTemplate> kernel_file_template(const kernels::KernelSpec& spec);
// The template a stored record was measured in: the one of its name, or, for a record from
// before a template was split in two, the template its config belongs to now
// (KernelTemplate::reads_record). Throws std::invalid_argument "unknown template '...'".
const kernels::KernelTemplate& template_of_record(std::string_view template_name, const nlohmann::json& config);

}  // namespace optune::backends
