// The .cl files of kernels/opencl as compiled into optune::opencl (generated at build time by
// kernels/embed_opencl_sources.cmake).
#pragma once

#include <span>
#include <string_view>

namespace optune::opencl {

struct EmbeddedSource {
  std::string_view file;  // "gemm.cl"
  std::string_view text;
};
std::span<const EmbeddedSource> embedded_sources();

}  // namespace optune::opencl
