// The CUDA backend's templates: for now a user's kernel files only (kernel_file_template.cpp),
// with the format's rules for them (kernel_file_traits.cpp).
#pragma once

#include <memory>

#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/kernel_file_traits.hpp"
#include "optune/kernels/kernel_template.hpp"

namespace optune::backends::cuda {

const kernels::KernelFileTraits& cuda_kernel_file_traits();
std::unique_ptr<kernels::KernelTemplate> cuda_kernel_file_template(kernels::KernelSpec spec);

}  // namespace optune::backends::cuda
