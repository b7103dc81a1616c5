// Between the tuning spaces and the convolution kernels: a config of the "conv2d.cpu" or
// "depthwise_conv2d.cpu" space turned into the struct its kernel takes, and such a struct
// written as C++ source (for emitted candidates and the tables of `optune apply-best`). Defined
// with the templates in kernels/src/cpu_conv2d_template.cpp and cpu_depthwise_conv2d_template.cpp,
// so that the knob names live in one file per template.
#pragma once

#include <string>

#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"

namespace optune::kernels::cpu {

// Throw std::invalid_argument when the config lacks a knob of the template's space.
Conv2dConfig conv2d_config_from_view(const search_space::ConfigView& config);
DepthwiseConv2dConfig depthwise_conv2d_config_from_view(const search_space::ConfigView& config);

// "optune::kernels::cpu::Conv2dConfig{.lanes = 8, ...}", and the depthwise equivalent.
std::string conv2d_config_literal(const Conv2dConfig& config);
std::string depthwise_conv2d_config_literal(const DepthwiseConv2dConfig& config);

// The kernels' shape of a conv2d or depthwise conv2d workload (K = C for depthwise).
Conv2dDims conv2d_dims(const Workload& workload);
// "optune::kernels::cpu::Conv2dDims{.N = 1, ...}"
std::string conv2d_dims_literal(const Conv2dDims& dims);

}  // namespace optune::kernels::cpu
