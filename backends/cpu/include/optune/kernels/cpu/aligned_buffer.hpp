// AlignedBuffer: a 64-byte aligned float buffer that only grows, the scratch of the CPU kernels
// (packed panels, blocked layouts). Kernels keep one per thread and role (thread_local), so
// repeated calls reuse their buffers instead of allocating and faulting pages in every call.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace optune::kernels::cpu {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data_); }

  float* reserve(std::size_t floats) {
    if (floats <= capacity_) return data_;
    std::free(data_);
    const std::size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    data_ = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (data_ == nullptr) {
      capacity_ = 0;
      throw std::bad_alloc();
    }
    capacity_ = bytes / sizeof(float);
    return data_;
  }
  float* data() const { return data_; }

 private:
  float* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace optune::kernels::cpu
