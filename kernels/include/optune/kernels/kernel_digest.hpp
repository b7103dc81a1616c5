// Which kernel a kernel file's records measured. Records belong to a template named
// "kernel.<name>.<backend>#<digest>", where the digest covers everything that decides what a
// config computes and how it is checked: the source (and a separate reference source), the entry,
// the build options, the arguments (dtypes, counts, values, inits and the contents of `data`
// files), the launch sizes and the check (reference, `expected` files' contents, tolerances). A
// changed kernel, or the same kernel called from Python with other arrays or another answer, is
// another template: its configs are measured and checked again instead of the old records
// standing for them. Knobs, constraints, extents and the work expressions are left out: adding a
// knob value keeps every record, and the extents are the workload key's.
#pragma once

#include <string>
#include <string_view>

#include "optune/kernels/kernel_file.hpp"

namespace optune::kernels {

std::string kernel_digest(const KernelSpec& spec);  // 8 hex digits
std::string kernel_template_name(const KernelSpec& spec);  // "kernel.saxpy.cpu#1a2b3c4d"
std::string kernel_template_prefix(std::string_view name, std::string_view backend);  // "kernel.saxpy.cpu"
// Whether a record's template is one of kernel `name` on `backend`: any digest, or none (records
// written before digests).
bool is_kernel_template_of(std::string_view template_name, std::string_view name, std::string_view backend);

}  // namespace optune::kernels
