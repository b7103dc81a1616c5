// The operands the worker keeps for the workload it is measuring: random inputs (never zeros),
// an output to poison, and the reference result, made once per workload and shared by the CPU
// and OpenCL measurements.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "optune/measure/kernel_operands.hpp"

namespace optune::measure {

inline constexpr std::size_t kAlignment = 64;  // a cache line: no candidate sees a split vector load

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], AlignedFree>;
Buffer allocate(std::size_t count);

// A built-in operator's float operands; a user kernel's typed ones are `kernel` (the request says
// which: WorkerRequest::kernel).
struct Operands {
  std::string workload_key;
  std::vector<Buffer> inputs;
  std::vector<const float*> input_pointers;
  Buffer output;
  Buffer expected;
  std::size_t output_size = 0;
  KernelOperands kernel;
};

// Makes the operands of the workload with this key unless they are already there.
void prepare(Operands& operands, const std::string& key, std::uint64_t seed);

}  // namespace optune::measure
