// C = A * B in bf16 or f16 on Hopper's warpgroup tensor cores (wgmma.mma_async, float32
// accumulation), A M x K and B K x N and C M x N row-major: the kernel of "gemm_wgmma.cuda".
// WGS warpgroups of 128 threads, each computing MI tiles of 64 rows x BN columns; K in slices of
// BK = 64 (one 128-byte row of 16-bit elements) that cp.async copies into STAGES shared-memory
// buffers in the 128-byte swizzled layouts wgmma reads: A K-major (rows of 64 k), B MN-major
// (slabs of 64 n, one 128-byte row per k), so B needs the instruction's transpose flag.
// Defines: BN MI WGS STAGES GROUP_M, GEMM_M GEMM_N GEMM_K, OPTUNE_F16 for f16 (else bf16).
#include "gemm_common.cuh"

constexpr int BK = 64;
constexpr int BM = 64 * MI * WGS;
constexpr int THREADS = 128 * WGS;
constexpr int A_STAGE_BYTES = BM * 128;
constexpr int B_STAGE_BYTES = BN * 128;
constexpr int B_SLAB_BYTES = BK * 128;  // 64 n of every k

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
    copy16(b_stage + slab * B_SLAB_BYTES + swizzled(r, c), valid ? B + static_cast<long>(k0 + r) * GEMM_N + col0 + n : B,
           valid);
  }
}

// A shared-memory matrix descriptor: start, leading and stride byte offsets (16-byte units),
// 128-byte swizzle.
__device__ inline unsigned long long descriptor(unsigned address, unsigned leading, unsigned stride) {
  return static_cast<unsigned long long>((address & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>(leading >> 4) << 16) |
         (static_cast<unsigned long long>(stride >> 4) << 32) | (1ull << 62);
}

__device__ inline void wgmma_n64(float* d, unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." MMA_TYPE "." MMA_TYPE " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_n128(float* d, unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." MMA_TYPE "." MMA_TYPE " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_n256(float* d, unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." MMA_TYPE "." MMA_TYPE " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}


__device__ inline void wgmma(float* d, unsigned long long a, unsigned long long b) {
#if BN == 64
  wgmma_n64(d, a, b, 1);
#elif BN == 128
  wgmma_n128(d, a, b, 1);
#else
  wgmma_n256(d, a, b, 1);
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_wgmma(const element* __restrict__ A,
                                                                 const element* __restrict__ B, element* __restrict__ C) {
  extern __shared__ __align__(1024) unsigned char shared_bytes[];
  // The swizzle atoms must start on 1024-byte boundaries.
  const unsigned base = (shared_address(shared_bytes) + 1023) & ~1023u;
  const unsigned a_stages = base, b_stages = base + STAGES * A_STAGE_BYTES;

  int row0, col0;
  block_origin<BM, BN>(row0, col0);
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
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      // B, MN-major: slabs of 64 n B_SLAB_BYTES apart (leading), 8-k groups 1024 bytes apart (stride).
      const unsigned long long b = descriptor(b_stage + kk * 16 * 128, B_SLAB_BYTES, 1024);
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        // A, K-major: this warpgroup's 64 rows, k16 slice kk (32 bytes in); 8-row groups 1024 apart.
        const unsigned long long a = descriptor(a_stage + (group * MI + mi) * 64 * 128 + kk * 32, 16, 1024);
        wgmma(acc[mi], a, b);
      }
    }
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

  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    const int row = row0 + (group * MI + mi) * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int col = col0 + j * 8 + (lane % 4) * 2;
      if (col >= GEMM_N) continue;
      element2* out = reinterpret_cast<element2*>(C + static_cast<long>(row) * GEMM_N + col);
      if (row < GEMM_M) out[0] = to_element2(acc[mi][j * 4 + 0], acc[mi][j * 4 + 1]);
      if (row + 8 < GEMM_M) out[4 * GEMM_N] = to_element2(acc[mi][j * 4 + 2], acc[mi][j * 4 + 3]);
    }
  }
}
