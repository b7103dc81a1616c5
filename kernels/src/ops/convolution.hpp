// What conv2d and depthwise_conv2d share: both are a Conv2dShape (depthwise with K = C = groups)
// on NCHW or NCHW[b]c activations (conv2d also on NHWC), so their checks, operand sizes, reference
// and shape features are the same code with the operator's filter and channel counts.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "optune/kernels/workload.hpp"

namespace optune::kernels {

// The checks of a convolution's shape, in the order their messages take precedence: first
// check_convolution_extents, then the operator's own (depthwise: K = C = groups), then
// check_convolution_geometry (a positive output, channels divisible by groups).
void check_convolution_shape_kind(const Workload& workload, std::string_view context);
void check_convolution_extents(const Conv2dShape& shape, std::string_view context);
void check_convolution_geometry(const Conv2dShape& shape, std::string_view context);

double convolution_tensor_elements(const Conv2dShape& shape);
// Input (in the workload's input layout) and filter, of `filter_elements` OIHW (NHWC: OHWI) elements.
std::vector<std::size_t> convolution_input_sizes(const Workload& workload, std::int64_t filter_elements);
// The output of `channels` channels in the workload's layout.
std::size_t convolution_output_size(const Workload& workload, std::int64_t channels);
// The exact result of the convolution `shape` (with any groups) on the workload's layouts: the
// NCHW reference between layout conversions (of the filter too on NHWC).
void reference_convolution(const Workload& workload, const Conv2dShape& shape,
                           const std::vector<const double*>& inputs, double* output);
std::vector<std::pair<std::string, float>> convolution_shape_features(const Conv2dShape& shape);

}  // namespace optune::kernels
