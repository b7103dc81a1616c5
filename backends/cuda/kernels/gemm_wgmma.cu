// C = A * B in bf16 or f16 on Hopper's warpgroup tensor cores (wgmma.mma_async, float32
// accumulation), A M x K and B K x N and C M x N row-major: the kernel of "gemm_wgmma.cuda".
// WGS warpgroups of 128 threads, each computing MI tiles of 64 rows x BN columns; K in slices of
// BK = 64 (one 128-byte row of 16-bit elements) that cp.async copies into STAGES shared-memory
// buffers in the 128-byte swizzled layouts wgmma reads: A K-major (rows of 64 k), B MN-major
// (slabs of 64 n, one 128-byte row per k), so B needs the instruction's transpose flag.
// Parameters: A, B, C, group_m (tile_origin). Defines: BN MI WGS STAGES, GEMM_M GEMM_N GEMM_K, OPTUNE_F16 for f16 (else bf16).
#include "gemm_common.cuh"
#include "wgmma.cuh"

constexpr int BK = 64;
constexpr int BM = 64 * MI * WGS;
constexpr int THREADS = 128 * WGS;
constexpr int A_STAGE_BYTES = BM * 128;
constexpr int B_STAGE_BYTES = BN * 128;

// The 128-byte swizzle: 16-byte chunk c of row r sits at chunk c ^ (r % 8).
__device__ inline unsigned swizzled(int row, int chunk) { return row * 128 + ((chunk ^ (row & 7)) << 4); }

__device__ inline void load_stage(unsigned a_stage, unsigned b_stage, const element* A, const element* B, int row0,
                                  int col0, int k0) {
#pragma unroll
  for (int i = threadIdx.x; i < BM * 8; i += THREADS) {
    const int r = i / 8, c = i % 8;
    const bool valid = row0 + r < GEMM_M && k0 + c * 8 < GEMM_K;
    copy16(a_stage + swizzled(r, c), valid ? A + static_cast<long>(row0 + r) * GEMM_K + k0 + c * 8 : A, valid);
  }
#pragma unroll
  for (int i = threadIdx.x; i < BK * BN / 8; i += THREADS) {
    const int r = i / (BN / 8), n = (i % (BN / 8)) * 8;
    const int slab = n / 64, c = (n % 64) / 8;
    const bool valid = k0 + r < GEMM_K && col0 + n < GEMM_N;
    copy16(b_stage + slab * WGMMA_SLAB_BYTES + swizzled(r, c), valid ? B + static_cast<long>(k0 + r) * GEMM_N + col0 + n : B,
           valid);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_wgmma(const element* __restrict__ A,
                                                                 const element* __restrict__ B, element* __restrict__ C,
    int group_m) {
  extern __shared__ __align__(1024) unsigned char shared_bytes[];
  // The swizzle atoms must start on 1024-byte boundaries.
  const unsigned base = (shared_address(shared_bytes) + 1023) & ~1023u;
  const unsigned a_stages = base, b_stages = base + STAGES * A_STAGE_BYTES;

  int row0, col0;
  block_origin<BM, BN>(group_m, row0, col0);
  const int group = threadIdx.x / 128;

  float acc[MI][BN / 2];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int j = 0; j < BN / 2; ++j) acc[mi][j] = 0.0f;

  constexpr int K_TILES = (GEMM_K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < K_TILES) load_stage(a_stages + s * A_STAGE_BYTES, b_stages + s * B_STAGE_BYTES, A, B, row0, col0, s * BK);
    commit();
  }
  for (int kt = 0; kt < K_TILES; ++kt) {
    wait_copies<STAGES - 2>();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // cp.async's writes, seen by wgmma
    __syncthreads();
    const unsigned a_stage = a_stages + (kt % STAGES) * A_STAGE_BYTES;
    const unsigned b_stage = b_stages + (kt % STAGES) * B_STAGE_BYTES;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    wgmma_slice<MI>(acc, a_stage + group * MI * 64 * 128, b_stage);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    // One group in flight: the previous slice's is done, in every warpgroup once all pass the
    // barrier, so its buffer takes the slice STAGES - 1 ahead.
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < K_TILES)
      load_stage(a_stages + (next % STAGES) * A_STAGE_BYTES, b_stages + (next % STAGES) * B_STAGE_BYTES, A, B, row0,
                 col0, next * BK);
    commit();
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  wait_copies<0>();

  store_accumulators<MI>(C, acc, row0 + group * MI * 64, col0);
}
