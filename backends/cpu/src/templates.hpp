// The CPU backend's templates, one accessor each (defined in <op>_template.cpp), listed by backend.cpp.
#pragma once

#include "optune/kernels/kernel_template.hpp"

namespace optune::kernels {

const KernelTemplate& cpu_gemm_template();
const KernelTemplate& cpu_conv2d_template();  // direct
const KernelTemplate& cpu_conv2d_gemm_template();
const KernelTemplate& cpu_depthwise_conv2d_template();

}  // namespace optune::kernels
