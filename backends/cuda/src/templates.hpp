// The CUDA backend's templates: GEMM on tensor cores (gemm_template.cpp: mma.sync from 8.0 on;
// gemm_wgmma_template.cpp: Hopper's wgmma fed by TMA, the default there, or by cp.async;
// gemm_3xtf32_template.cpp: float32 on Hopper's tensor cores), conv2d as an implicit GEMM on them
// (conv2d_tma_template.cpp), and a user's kernel files (kernel_file_template.cpp) with the
// format's rules for them (kernel_file_traits.cpp).
#pragma once

#include <memory>

#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/kernel_file_traits.hpp"
#include "optune/kernels/kernel_template.hpp"

namespace optune::backends::cuda {

const kernels::KernelTemplate& gemm_template();
const kernels::KernelTemplate& gemm_wgmma_template();
const kernels::KernelTemplate& gemm_tma_template();  // gemm_wgmma_template.cpp
const kernels::KernelTemplate& gemm_3xtf32_template();
const kernels::KernelTemplate& gemm_ffma_template();
const kernels::KernelTemplate& conv2d_tma_template();
const kernels::KernelFileTraits& cuda_kernel_file_traits();
std::unique_ptr<kernels::KernelTemplate> cuda_kernel_file_template(kernels::KernelSpec spec);

}  // namespace optune::backends::cuda
