// The OpenCL backend's templates, one accessor each (defined in <op>_template.cpp), and their list.
#pragma once

#include <memory>
#include <vector>

#include "optune/kernels/kernel_file.hpp"
#include "optune/kernels/opencl/opencl_template.hpp"

namespace optune::kernels {

const OpenCLTemplate& opencl_gemm_template();
const OpenCLTemplate& opencl_conv2d_template();
const OpenCLTemplate& opencl_depthwise_conv2d_template();

// Whether gemm.opencl runs the GEMM on the tensor-core kernel (gemm_mma.cl) on the device.
bool opencl_gemm_uses_tensor_cores(const Workload& workload, const DeviceInfo& device);

std::vector<const OpenCLTemplate*> opencl_templates();
// The first template of the op; throws std::invalid_argument when there is none.
const OpenCLTemplate& opencl_template_for(Op op);

// A user's kernel file of the opencl backend as a template (kernel_file_template.cpp; in the
// backend's library, not in optune::opencl, since it speaks to the worker).
std::unique_ptr<KernelTemplate> opencl_kernel_file_template(KernelSpec spec);
// What the kernel-file format asks of the opencl backend (kernel_file_traits.cpp).
const KernelFileTraits& opencl_kernel_file_traits();

}  // namespace optune::kernels
