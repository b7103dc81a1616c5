// Compiling CUDA C++ source with NVRTC into what the driver loads: a CUBIN for a real GPU
// architecture (sm_XX), or PTX (compute_XX) that the driver compiles for a GPU newer than this
// NVRTC knows. A compile error is a result (a candidate's failure), not an exception.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace optune::backends::cuda {

struct CompileRequest {
  std::string source;                         // CUDA C++ text
  std::string program_name = "kernel.cu";     // names the source in the log
  std::vector<std::string> options;           // e.g. "-DTILE=16", "--use_fast_math"
  std::string arch = "sm_90a";                // sm_XX[a] gives a CUBIN, compute_XX gives PTX
  // Kernels to look up after loading: "&vector_add", "&matmul<float, 16>"; a template's
  // instantiation is made by naming it here.
  std::vector<std::string> name_expressions;
  // Where cuda_fp16.h and friends are; empty: the toolkit's, where one is found (toolkit_include_dir).
  std::string include_dir;
};

struct CompileResult {
  bool ok = false;
  // The CUBIN, or the PTX text with its terminating NUL (as cuModuleLoadData takes it).
  std::vector<char> binary;
  bool is_ptx = false;
  std::map<std::string, std::string> lowered_names;  // name expression -> symbol in `binary`
  std::string log;                                   // NVRTC's messages (warnings even when ok)
  double seconds = 0;                                // wall time of the compile
};

// Throws std::runtime_error naming what is missing when NVRTC cannot be loaded.
CompileResult compile_cuda(const CompileRequest& request);

// The architecture to compile for on a device of compute capability major.minor, given the real
// architectures NVRTC supports (NvrtcApi::supported_archs): "sm_90a" from 9.0 up (the
// arch-specific features: wgmma, setmaxnreg; such a CUBIN runs on that exact GPU only),
// "sm_86" below; a capability newer than NVRTC knows gets "compute_XY" of the newest it supports
// at or below, as PTX the driver compiles. Throws std::invalid_argument for a device older than
// every supported architecture.
std::string compile_arch(int major, int minor, const std::vector<int>& supported_archs);

// The first of /usr/local/cuda/include and <libnvrtc's directory>/../include holding
// cuda_fp16.h, or "" when neither does.
std::string toolkit_include_dir(const std::string& nvrtc_library);

}  // namespace optune::backends::cuda
