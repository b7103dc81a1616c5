// CacheLineAllocator: a std::allocator that aligns every array to a 64-byte cache line. The
// worker's operand buffers use it because applications' tensors are aligned so (PyTorch's and
// oneDNN's CPU allocators align to 64): with malloc's 16-byte alignment a kernel reading its
// operands in place (AVX-512 rows, AMX tile loads) splits cache lines that it never splits in
// deployment, runs up to 1.6x slower, and the tuner ranks configs that copy their operands first
// above the ones that would win in the application.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace optune::measure {

inline constexpr std::size_t kCacheLineBytes = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLineBytes}));
  }
  // (The unsized form: clang before 19 declares the sized one only with -fsized-deallocation.)
  void deallocate(T* p, std::size_t /*n*/) noexcept { ::operator delete(p, std::align_val_t{kCacheLineBytes}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
};

// An operand's bytes, starting on a cache line.
using AlignedBytes = std::vector<std::byte, CacheLineAllocator<std::byte>>;

}  // namespace optune::measure
