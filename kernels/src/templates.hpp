// The built-in templates, one accessor per (op, backend): each template file (e.g.
// cpu_gemm_template.cpp) defines one such accessor returning its single instance, and
// registry.cpp lists them.
#pragma once

#include "optune/kernels/kernel_template.hpp"

namespace optune::kernels {

const KernelTemplate& cpu_gemm_template();
const KernelTemplate& cpu_conv2d_template();
const KernelTemplate& cpu_depthwise_conv2d_template();
const KernelTemplate& opencl_gemm_template();
const KernelTemplate& opencl_conv2d_template();
const KernelTemplate& opencl_depthwise_conv2d_template();

}  // namespace optune::kernels
