// Suite: the distinct operator workloads of a network, each with how many times the network runs
// it (configs/workloads/*.toml). A suite is tuned as a list of tasks, and its estimated latency is
// the sum over workloads of count x best latency.
//
// File format (TOML):
//   name = "resnet18"                  # required
//   description = "..."                # optional
//   [[workload]]                       # one table per distinct workload
//   name = "layer1.conv"               # optional label, unique within the suite
//   op = "conv2d"                      # gemm, conv2d or depthwise_conv2d
//   shape = "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"   # as `optune tune --shape`
//   count = 4                          # times the network runs it; default 1
#pragma once

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
  int count = 1;
};

struct Suite {
  std::string name;
  std::string description;
  std::vector<SuiteEntry> entries;
};

Suite load_suite(const std::string& path);            // throws SuiteError
Suite parse_suite(const std::string& text, const std::string& source_name);  // throws SuiteError

}  // namespace optune::tuner
