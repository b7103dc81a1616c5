// C = A * B in bf16 or f16 on tensor cores (mma.sync m16n8k16, float32 accumulation), A M x K and
// B K x N and C M x N row-major: the kernel of the "gemm.cuda" template. A block of WM x WN warps
// computes a BM x BN tile of C, stepping over K in BK slices that cp.async copies into STAGES
// shared-memory buffers ahead of the math (a copy in flight per stage); warps read their fragments
// with ldmatrix (rows padded by 16 bytes, so its eight row reads hit eight bank groups). Blocks
// are walked in bands of group_m row tiles, so the B tiles a band reads stay in L2. Edges of M, N
// and K are zero-filled on load and guarded on store; K and N must be multiples of 8 (16-byte
// rows of chunks).
//
// Parameters: A, B, C, group_m (tile_origin). Defines (the config's other knobs and the workload):
// BM BN BK WM WN STAGES, GEMM_M GEMM_N GEMM_K, and OPTUNE_F16 for f16 (else bf16).
#include "gemm_common.cuh"

constexpr int THREADS = WM * WN * 32;
constexpr int WARP_M = BM / WM;  // a warp's tile
constexpr int WARP_N = BN / WN;
constexpr int MI = WARP_M / 16;  // mma tiles per warp
constexpr int NI = WARP_N / 8;
constexpr int PAD = 8;  // elements: 16 bytes
constexpr int A_STRIDE = BK + PAD;
constexpr int B_STRIDE = BN + PAD;
constexpr int A_STAGE = BM * A_STRIDE;
constexpr int B_STAGE = BK * B_STRIDE;


__device__ inline void load_tiles(element* As, element* Bs, const element* A, const element* B, int row0, int col0,
                                  int k0) {
  const int thread = threadIdx.x;
  constexpr int A_CHUNKS = BM * BK / 8;
  constexpr int B_CHUNKS = BK * BN / 8;
#pragma unroll
  for (int i = thread; i < A_CHUNKS; i += THREADS) {
    const int r = i / (BK / 8), c = (i % (BK / 8)) * 8;
    const bool valid = row0 + r < GEMM_M && k0 + c < GEMM_K;
    copy16(shared_address(As + r * A_STRIDE + c), valid ? A + static_cast<long>(row0 + r) * GEMM_K + k0 + c : A,
           valid);
  }
#pragma unroll
  for (int i = thread; i < B_CHUNKS; i += THREADS) {
    const int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
    const bool valid = k0 + r < GEMM_K && col0 + c < GEMM_N;
    copy16(shared_address(Bs + r * B_STRIDE + c), valid ? B + static_cast<long>(k0 + r) * GEMM_N + col0 + c : B,
           valid);
  }
}

__device__ inline void mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPE "." MMA_TYPE ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_mma(const element* __restrict__ A,
                                                               const element* __restrict__ B, element* __restrict__ C,
    int group_m) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  element* As = reinterpret_cast<element*>(shared_bytes);
  element* Bs = As + STAGES * A_STAGE;

  int row0, col0;
  block_origin<BM, BN>(group_m, row0, col0);

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row = (warp / WN) * WARP_M, warp_col = (warp % WN) * WARP_N;
  float acc[MI][NI][4] = {};

  constexpr int K_TILES = (GEMM_K + BK - 1) / BK;
  auto load = [&](int buffer, int slice) {
    load_tiles(As + buffer * A_STAGE, Bs + buffer * B_STAGE, A, B, row0, col0, slice * BK);
  };
  pipelined_slices<STAGES, K_TILES>(load, [&](int buffer) {
    const element* as = As + buffer * A_STAGE;
    const element* bs = Bs + buffer * B_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[MI][4], b[NI][2];
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        const element* p = as + (warp_row + mi * 16 + lane % 16) * A_STRIDE + kk + (lane / 16) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(a[mi][0]), "=r"(a[mi][1]), "=r"(a[mi][2]), "=r"(a[mi][3])
                     : "r"(shared_address(p)));
      }
#pragma unroll
      for (int ni = 0; ni < NI; ni += 2) {
        const element* p = bs + (kk + lane % 16) * B_STRIDE + warp_col + ni * 8 + (lane / 16) * 8;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(b[ni][0]), "=r"(b[ni][1]), "=r"(b[ni + 1][0]), "=r"(b[ni + 1][1])
                     : "r"(shared_address(p)));
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) mma(acc[mi][ni], a[mi], b[ni]);
    }
  });

#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const int row = row0 + warp_row + mi * 16 + lane / 4;
      const int col = col0 + warp_col + ni * 8 + (lane % 4) * 2;
      if (col < GEMM_N) {
        element2* out = reinterpret_cast<element2*>(C + static_cast<long>(row) * GEMM_N + col);
        if (row < GEMM_M) out[0] = to_element2(acc[mi][ni][0], acc[mi][ni][1]);
        if (row + 8 < GEMM_M) out[4 * GEMM_N] = to_element2(acc[mi][ni][2], acc[mi][ni][3]);  // 8 rows on
      }
    }
  }
}
