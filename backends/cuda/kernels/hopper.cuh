// Hopper's asynchronous shared-memory machinery as the warp-specialised GEMM kernels use it
// (gemm_tma.cu, gemm_3xtf32.cu): mbarriers that hand buffers between warps, the Tensor Memory
// Accelerator's bulk copies that complete on them, and wgmma's shared-memory matrix descriptors.
#pragma once

// CUtensorMap: 128 opaque bytes, 64-byte aligned, passed by value.
struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

__device__ inline void barrier_init(unsigned barrier, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(count));
}
// One arrival that also tells the barrier how many bytes the copies of this phase bring.
__device__ inline void arrive_expecting(unsigned barrier, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
}
__device__ inline void arrive(unsigned barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}
// Waits until the barrier's phase of this parity has completed.
__device__ inline void wait(unsigned barrier, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
}

// The box of `map` at (inner, outer) elements into shared memory, completing on `barrier`.
__device__ inline void tma_load(unsigned destination, const TensorMap& map, unsigned barrier, int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          destination),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(barrier), "r"(inner), "r"(outer)
      : "memory");
}

// The im2col copy of `map` (a channels-last activation of rank 4, tensor_map.hpp's im2col_map):
// the map's pixels from pixel (w, h) of image n on, walked as the output's, `channels_per_pixel`
// channels from c of each, read at the filter tap's offset (w_offset, h_offset) from it.
__device__ inline void tma_load_im2col(unsigned destination, const TensorMap& map, unsigned barrier, int c, int w,
                                       int h, int n, unsigned short w_offset, unsigned short h_offset) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n" ::"r"(destination),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(barrier), "r"(c), "r"(w), "r"(h), "r"(n), "h"(w_offset),
      "h"(h_offset)
      : "memory");
}

// The box of `map` at (inner, outer) from shared memory into global memory (out-of-bounds parts
// skipped), in this thread's bulk group.
__device__ inline void tma_store(const TensorMap& map, unsigned source, int inner, int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<unsigned long long>(&map)),
               "r"(source), "r"(inner), "r"(outer)
               : "memory");
}
__device__ inline void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until at most `Pending` of this thread's bulk groups still read their shared memory.
template <int Pending>
__device__ inline void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}
// This thread's shared-memory writes, seen by the bulk copies that follow (the async proxy).
__device__ inline void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Named barrier `id` (1-15; 0 is __syncthreads's) of `threads` threads.
__device__ inline void named_barrier(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// A shared-memory matrix descriptor: start, leading and stride byte offsets (16-byte units),
// 128-byte swizzle.
__device__ inline unsigned long long descriptor(unsigned address, unsigned leading, unsigned stride) {
  return static_cast<unsigned long long>((address & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>(leading >> 4) << 16) |
         (static_cast<unsigned long long>(stride >> 4) << 32) | (1ull << 62);
}
