// The reference of the int8 and bf16 conv2d tests (cpu_conv2d_dot_test.cpp, im2col on NCHW, and
// cpu_conv2d_dot_nchwc_test.cpp, direct on NCHW16c): the direct sum in double over an NCHW input
// and an OIHW filter of the same low-precision values, and a layer's one-line description.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/cpu/element_types.hpp"

namespace optune::kernels::cpu {

template <typename TIn, typename TW>
std::vector<double> conv_dot_reference(const Conv2dDims& d, const std::vector<TIn>& input,
                                       const std::vector<TW>& filter) {
  const std::int64_t P = d.out_h(), Q = d.out_w();
  std::vector<double> out(d.N * d.K * P * Q, 0.0);
  for (std::int64_t n = 0; n < d.N; ++n)
    for (std::int64_t k = 0; k < d.K; ++k)
      for (std::int64_t p = 0; p < P; ++p)
        for (std::int64_t q = 0; q < Q; ++q) {
          double sum = 0;
          for (std::int64_t c = 0; c < d.C; ++c)
            for (std::int64_t r = 0; r < d.R; ++r)
              for (std::int64_t s = 0; s < d.S; ++s) {
                const std::int64_t h = p * d.stride - d.pad + r * d.dilation, w = q * d.stride - d.pad + s * d.dilation;
                if (h < 0 || h >= d.H || w < 0 || w >= d.W) continue;
                sum += double(widen(input[((n * d.C + c) * d.H + h) * d.W + w])) *
                       widen(filter[((k * d.C + c) * d.R + r) * d.S + s]);
              }
          out[((n * d.K + k) * P + p) * Q + q] = sum;
        }
  return out;
}

inline std::string describe_layer(const Conv2dDims& d) {
  return "N" + std::to_string(d.N) + " C" + std::to_string(d.C) + " H" + std::to_string(d.H) + " W" +
         std::to_string(d.W) + " K" + std::to_string(d.K) + " R" + std::to_string(d.R) + " S" + std::to_string(d.S) +
         " stride " + std::to_string(d.stride) + " pad " + std::to_string(d.pad) + " dilation " +
         std::to_string(d.dilation);
}

}  // namespace optune::kernels::cpu
