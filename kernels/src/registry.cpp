// The templates optune knows. Each template file defines one accessor (templates.hpp); adding a
// template is adding its accessor to this list.
#include <stdexcept>
#include <string>
#include <vector>

#include "optune/kernels/kernel_template.hpp"
#include "templates.hpp"

namespace optune::kernels {

std::vector<const KernelTemplate*> all_templates() {
  return {
      &cpu_gemm_template(),
      &cpu_conv2d_template(),
      &cpu_depthwise_conv2d_template(),
      &opencl_gemm_template(),
      &opencl_conv2d_template(),
      &opencl_depthwise_conv2d_template(),
  };
}

const KernelTemplate& find_template(Op op, Backend backend) {
  for (const KernelTemplate* candidate : all_templates()) {
    if (candidate->op() == op && candidate->backend() == backend) return *candidate;
  }
  throw std::invalid_argument("kernels: no template for op " + std::string(op_name(op)) +
                              " on backend " + std::string(backend_name(backend)));
}

}  // namespace optune::kernels
