// C = A * B in float32 with FP32 FMA on the CUDA cores (no tensor cores, no TF32), A M x K, B K x N
// and C M x N row-major: the kernel of the "gemm_ffma.cuda" template, cuBLAS FP32's own arithmetic.
// A block of (BM / TM) x (BN / TN) threads computes a BM x BN tile of C, each thread a TM x TN
// tile in registers: rows TM from ty TM, columns in TN / 4 groups of four, BN / (TN / 4) apart,
// so a warp's 16-byte reads of a row of B are consecutive words (no bank conflict). K goes in BK
// slices that cp.async copies into STAGES shared-memory buffers ahead of the math; a thread reads
// four k of each of its A rows at once (rows padded by 4 floats). Edges of M, N and K are
// zero-filled on load and guarded on store; K and N are multiples of 4 (16-byte chunks).
// Parameters: A, B, C, group_m (tile_origin). Defines (the config's other knobs and the workload):
// BM BN BK TM TN STAGES, GEMM_M GEMM_N GEMM_K.
#define OPTUNE_F32
#include "gemm_common.cuh"

constexpr int THREADS = (BM / TM) * (BN / TN);
constexpr int GROUPS = TN / 4;            // a thread's float4 column groups
constexpr int GROUP_SPAN = BN / GROUPS;   // columns from one group to the next
constexpr int A_STRIDE = BK + 4;          // floats a row of A's buffer
constexpr int A_STAGE = BM * A_STRIDE;
constexpr int B_STAGE = BK * BN;

__device__ inline void load_tiles(float* As, float* Bs, const float* A, const float* B, int row0, int col0, int k0) {
#pragma unroll
  for (int i = threadIdx.x; i < BM * BK / 4; i += THREADS) {
    const int r = i / (BK / 4), c = (i % (BK / 4)) * 4;
    const bool valid = row0 + r < GEMM_M && k0 + c < GEMM_K;
    copy16(shared_address(As + r * A_STRIDE + c), valid ? A + static_cast<long>(row0 + r) * GEMM_K + k0 + c : A,
           valid);
  }
#pragma unroll
  for (int i = threadIdx.x; i < BK * BN / 4; i += THREADS) {
    const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
    const bool valid = k0 + r < GEMM_K && col0 + c < GEMM_N;
    copy16(shared_address(Bs + r * BN + c), valid ? B + static_cast<long>(k0 + r) * GEMM_N + col0 + c : B, valid);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_ffma(const float* __restrict__ A,
                                                                const float* __restrict__ B, float* __restrict__ C,
    int group_m) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  float* As = reinterpret_cast<float*>(shared_bytes);
  float* Bs = As + STAGES * A_STAGE;

  int row0, col0;
  block_origin<BM, BN>(group_m, row0, col0);
  const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
  float acc[TM][TN] = {};

  constexpr int K_TILES = (GEMM_K + BK - 1) / BK;
  auto load = [&](int buffer, int slice) {
    load_tiles(As + buffer * A_STAGE, Bs + buffer * B_STAGE, A, B, row0, col0, slice * BK);
  };
  pipelined_slices<STAGES, K_TILES>(load, [&](int buffer) {
    const float* as = As + buffer * A_STAGE + ty * TM * A_STRIDE;
    const float* bs = Bs + buffer * B_STAGE + tx * 4;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 4) {
      float4 a[TM], b[4][GROUPS];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = *reinterpret_cast<const float4*>(as + i * A_STRIDE + kk);
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int g = 0; g < GROUPS; ++g) b[q][g] = *reinterpret_cast<const float4*>(bs + (kk + q) * BN + g * GROUP_SPAN);
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float x = q == 0 ? a[i].x : q == 1 ? a[i].y : q == 2 ? a[i].z : a[i].w;
#pragma unroll
          for (int g = 0; g < GROUPS; ++g) {
            acc[i][4 * g + 0] = fmaf(x, b[q][g].x, acc[i][4 * g + 0]);
            acc[i][4 * g + 1] = fmaf(x, b[q][g].y, acc[i][4 * g + 1]);
            acc[i][4 * g + 2] = fmaf(x, b[q][g].z, acc[i][4 * g + 2]);
            acc[i][4 * g + 3] = fmaf(x, b[q][g].w, acc[i][4 * g + 3]);
          }
        }
    }
  });

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = row0 + ty * TM + i;
    if (row >= GEMM_M) continue;
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
      const int col = col0 + g * GROUP_SPAN + tx * 4;
      if (col < GEMM_N)
        *reinterpret_cast<float4*>(C + static_cast<long>(row) * GEMM_N + col) =
            make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
    }
  }
}
