// Suite: the distinct operator workloads of a network, each with how many times the network runs
// it (configs/workloads/*.toml). A suite is tuned as a list of tasks, and its estimated latency is
// the sum over workloads of count x best latency.
//
// File format (TOML):
//   name = "resnet18"                  # required
//   description = "..."                # optional
//   layout = "nchw8c"                  # optional: the activation layout the network keeps between
//                                      # its conv layers (nchw, nchw4c, nchw8c, nchw16c; default
//                                      # nchw): conv workloads take it, so no layer is timed with
//                                      # a layout transform; GEMMs have none
//   [[workload]]                       # one table per distinct workload
//   name = "layer1.conv"               # optional label, unique within the suite
//   op = "conv2d"                      # gemm, conv2d or depthwise_conv2d
//   shape = "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"   # as `optune tune --shape`
//   count = 4                          # times the network runs it; default 1
//   layout = "nchw"                    # optional, convolutions: this workload's own layout
//                                      # (nhwc: conv2d only); also accepted as "layout=..." in
//                                      # the shape
//   input_layout = "nchw"              # optional, conv2d: reads NCHW whatever its layout (a
//                                      # network's first layer, on the image): on a blocked
//                                      # layout its key says nchw-nchw8c
//   [[workload]]                       # a user's kernel instead of an operator:
//   kernel = "transpose.toml"          # a kernel file (kernel_file.hpp), relative to this file
//   shape = "N=1024,M=1024"            # optional: its extents (default the file's)
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "optune/kernels/workload.hpp"

namespace optune::tuner {

// A malformed suite: the message names the file, the line and the problem.
class SuiteError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct SuiteEntry {
  std::string name;
  kernels::Workload workload;
  std::string kernel_file;  // a user kernel's file (absolute); "" for an operator
  int count = 1;
};

struct Suite {
  std::string name;
  std::string description;
  int layout_block = kernels::kLayoutNchw;  // the suite's layout (entries may pin their own)
  std::vector<SuiteEntry> entries;
};

// Throw SuiteError. `layout` replaces the file's suite-level layout (`--layout`), `dtype` its
// suite-level dtype (`--dtype`); workloads that pin their own keep it.
Suite load_suite(const std::string& path, std::optional<int> layout = std::nullopt,
                 std::optional<kernels::DataType> dtype = std::nullopt);
Suite parse_suite(const std::string& text, const std::string& source_name, std::optional<int> layout = std::nullopt,
                  std::optional<kernels::DataType> dtype = std::nullopt);

}  // namespace optune::tuner
