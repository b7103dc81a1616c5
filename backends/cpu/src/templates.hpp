// The CPU backend's templates, one accessor each (defined in <op>_template.cpp), listed by backend.cpp.
#pragma once

#include <memory>

#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/kernel_template.hpp"

namespace optune::kernels {

const KernelTemplate& cpu_gemm_template();
const KernelTemplate& cpu_gemm_int8_template();
const KernelTemplate& cpu_gemm_bf16_template();  // where the device has avx512_bf16
const KernelTemplate& cpu_conv2d_template();  // direct
const KernelTemplate& cpu_conv2d_gemm_template();
const KernelTemplate& cpu_conv2d_int8_template();  // im2col columns on gemm_int8.hpp
const KernelTemplate& cpu_conv2d_bf16_template();  // the same on gemm_bf16.hpp, where avx512_bf16
const KernelTemplate& cpu_conv2d_int8_direct_template();  // direct on a kept nchw16c (conv2d_dot_nchwc.hpp)
const KernelTemplate& cpu_conv2d_bf16_direct_template();  // the same, where avx512_bf16
const KernelTemplate& cpu_depthwise_conv2d_template();
// A user's kernel file of the cpu backend as a template (kernel_file_template.cpp).
std::unique_ptr<KernelTemplate> cpu_kernel_file_template(KernelSpec spec);
// What the kernel-file format asks of the cpu backend (kernel_file_traits.cpp).
const KernelFileTraits& cpu_kernel_file_traits();

}  // namespace optune::kernels
