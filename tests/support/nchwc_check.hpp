// The check of a kernel on the kept NCHW[b]c layout, shared by the conv2d and depthwise kernel
// tests: random operands of a conv layer in NCHW[block]c, junk in the input's padding channels,
// the output poisoned with NaN, both tensors ending at a page that faults when touched (a read or
// write past either crashes the test); the result against kernels::reference, and the output's
// padding channels, which must come back exactly zero.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <new>
#include <random>
#include <vector>

#include "optune/kernels/cpu/conv2d_config.hpp"
#include "optune/kernels/layout.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::test_support {

// `floats` floats that end where an inaccessible page begins: touching the float after the last
// one faults.
class GuardedFloats {
 public:
  explicit GuardedFloats(std::size_t floats) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t data_pages = (floats * sizeof(float) + page - 1) / page;
    bytes_ = (data_pages + 1) * page;
    void* map = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) throw std::bad_alloc();
    base_ = static_cast<char*>(map);
    mprotect(base_ + data_pages * page, page, PROT_NONE);
    data_ = reinterpret_cast<float*>(base_ + data_pages * page) - floats;
    size_ = floats;
  }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  ~GuardedFloats() { munmap(base_, bytes_); }
  float* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  char* base_ = nullptr;
  std::size_t bytes_ = 0;
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

struct Outcome {
  double error = 0;                  // relative L2 against the reference
  std::int64_t nonzero_padding = 0;  // output values in channels past K that are not exactly 0
};

// Runs `function` on random operands of `shape` in NCHW[block]c, the input's padding channels
// filled with junk and the output poisoned with NaN, and checks the result against the reference.
using NchwcKernel = std::function<void(const kernels::cpu::Conv2dDims&, const float*, const float*, float*)>;

// `op`: conv2d or depthwise_conv2d (shape.K = C). `nchw_input`: the kernel reads the input in NCHW
// (a first layer reading the image), still guarded; only its output is blocked.
inline Outcome run_blocked(kernels::Op op, const NchwcKernel& function, const kernels::Conv2dShape& shape, int block,
                           bool nchw_input = false) {
  using namespace kernels;
  using namespace kernels::cpu;
  const Workload workload{op, DataType::kF32, shape};
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> input(input_sizes(workload)[0]), filter(input_sizes(workload)[1]);
  for (float& x : input) x = value(rng);
  for (float& x : filter) x = value(rng);
  std::vector<float> want(output_size(workload)), got(output_size(workload));
  reference(workload, {input.data(), filter.data()}, want.data());

  const Conv2dShape& s = shape;
  const std::int64_t P = s.out_h(), Q = s.out_w();
  GuardedFloats blocked_input(nchwc_size(s.N, s.C, s.H, s.W, block));
  nchw_to_nchwc(input.data(), s.N, s.C, s.H, s.W, block, blocked_input.data());
  const std::int64_t in_blocks = (s.C + block - 1) / block;
  for (std::int64_t i = 0; i < s.N * in_blocks * s.H * s.W; ++i) {  // junk in channels past C
    if ((i / (s.H * s.W)) % in_blocks != in_blocks - 1) continue;
    for (std::int64_t c = s.C - (in_blocks - 1) * block; c < block; ++c) blocked_input.data()[i * block + c] = 1e3f;
  }
  GuardedFloats blocked_output(nchwc_size(s.N, s.K, P, Q, block));
  std::fill_n(blocked_output.data(), blocked_output.size(), std::nanf(""));

  GuardedFloats nchw(nchw_input ? input.size() : 0);
  if (nchw_input) std::copy(input.begin(), input.end(), nchw.data());
  const Conv2dDims dims{s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.stride, s.pad, s.dilation};
  function(dims, nchw_input ? nchw.data() : blocked_input.data(), filter.data(), blocked_output.data());

  nchwc_to_nchw(blocked_output.data(), s.N, s.K, P, Q, block, got.data());
  Outcome outcome{relative_l2_error(got.data(), want.data(), got.size()), 0};
  const std::int64_t out_blocks = (s.K + block - 1) / block;
  for (std::int64_t i = 0; i < s.N * out_blocks * P * Q; ++i) {
    if ((i / (P * Q)) % out_blocks != out_blocks - 1) continue;  // only the last block has padding
    for (std::int64_t c = s.K - (out_blocks - 1) * block; c < block; ++c) {
      outcome.nonzero_padding += blocked_output.data()[i * block + c] != 0.0f;
    }
  }
  return outcome;
}

}  // namespace optune::test_support
