// C = A * B in float32 at float32's accuracy on Hopper's tensor cores (3xTF32), A M x K and B K x N
// and C M x N row-major: the kernel of "gemm_3xtf32.cuda".
//
// Precision: the tensor cores multiply TF32 (10 mantissa bits). Each operand x is split into its
// TF32 rounding and the float remainder, x = big + small, and each product is summed from three
// tensor-core products, a_small b_big + a_big b_small + a_big b_big (CUTLASS's "3xTF32"); the
// dropped a_small b_small and the tensor cores' truncation of the small parts are about 2^-21 of a
// product.
//
// Layout: wgmma's tf32 form reads its shared-memory operand K-major only, and B is K x N. So the
// kernel computes C^T = B^T A^T: wgmma's A operand (64 rows of C's columns by 8 k) is B^T, read
// from shared memory into registers (any layout will do there) and split there; its B operand
// (C's rows) is A itself, K-major as stored, from shared memory through a descriptor. A block's
// tile of C is BM rows (wgmma's N) by BN = 64 x MI x WGS columns.
//
// Warp-specialised as gemm_tma.cu: warp 0 of a producer warpgroup issues the Tensor Memory
// Accelerator's copies of each 32-deep K slice (a 128-byte row of k for each of A's BM rows, in
// the 128-byte swizzle; B's 32 rows of k, BN + 8 floats each, unswizzled: the 8 floats of padding
// put a warp's fragment reads on 32 banks) into a STAGES-deep ring; its warps 1-3 split each A
// slice in place (big, rounded) and into a second buffer (small), so the consumers' wgmma reads
// both from shared memory; WGS consumer warpgroups, MI tiles of 64 columns each, read B's
// fragments, split them and issue three wgmma per 8 k. Three mbarriers per buffer: `full` (the
// copies landed), `split` (A's two parts written), `empty` (every consumer warp is done).
//
// Accumulation: the tensor cores sum with fewer bits than float32 keeps, so every PROMOTE_EVERY
// slices' sums go into fresh registers that are then added to the float32 sums (twice the
// registers). Summed in the tensor cores over all of K = 4096 instead, the error grew to 2.9e-5 of
// the result (relative L2), 25 times cuBLAS FP32's; promoted every 1, 2 or 4 slices it is 4.6e-7,
// 5.9e-7 and 9.7e-7, below cuBLAS FP32's 1.15e-6 (H200, 2026-11-30).
// Blocks walk C's tiles from blockIdx.x in steps of gridDim.x (persistent when the grid is smaller).
// Parameters: A, B, C, then the tensor maps of A (box 32 k x BM rows, 128-byte swizzle) and B (box
// BN + 8 n x 32 k, no swizzle), written by the host (CudaKernel::tensor_maps).
// Parameters end with group_m (tile_origin). Defines: BM MI WGS STAGES PROMOTE_EVERY, GEMM_M GEMM_N GEMM_K (K and N multiples of 4).
#define OPTUNE_F32
#include "gemm_common.cuh"
#include "hopper.cuh"

#ifndef PROMOTE_EVERY
#define PROMOTE_EVERY 1
#endif
static_assert(PROMOTE_EVERY >= 1, "float32's accuracy takes the sums out of the tensor cores");

constexpr int BK = 32;                 // a K slice: one 128-byte row of floats
constexpr int BN = 64 * MI * WGS;      // C's columns of a block's tile
constexpr int B_ROW = BN + 8;          // floats per row of B's buffer
constexpr int THREADS = 128 * (WGS + 1);
constexpr int A_STAGE_BYTES = BM * 128;
constexpr int B_STAGE_BYTES = BK * B_ROW * 4;
constexpr int K_TILES = (GEMM_K + BK - 1) / BK;
constexpr int TILES = ((GEMM_M + BM - 1) / BM) * ((GEMM_N + BN - 1) / BN);
constexpr int SPLITTERS = 3;  // producer warps splitting A
constexpr int PRODUCER_REGISTERS = 40;
constexpr int CONSUMER_REGISTERS = WGS == 1 ? 240 : 232;
static_assert(A_STAGE_BYTES % 1024 == 0 && B_STAGE_BYTES % 128 == 0, "buffers keep their alignment");

// x = big + small: big is x rounded to TF32 (nearest, ties away), small the exact remainder.
__device__ inline unsigned tf32_big(float x) { return (__float_as_uint(x) + 0x1000u) & 0xffffe000u; }
__device__ inline unsigned tf32_small(float x, unsigned big) { return __float_as_uint(x - __uint_as_float(big)); }

// d (+)= a * b for one 64 x BM x 8 step: a, the 16 x 8 fragment of B^T this warp holds (lane l: rows
// l / 4 and l / 4 + 8, columns l % 4 and l % 4 + 4); b, a descriptor of A's BM rows of k.
__device__ inline void wgmma_tf32_n64(float* d, const unsigned* a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_tf32_n128(float* d, const unsigned* a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_tf32_n256(float* d, const unsigned* a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, {%128,%129,%130,%131}, %132, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_tf32(float* d, const unsigned* a, unsigned long long b, int accumulate) {
#if BM == 64
  wgmma_tf32_n64(d, a, b, accumulate);
#elif BM == 128
  wgmma_tf32_n128(d, a, b, accumulate);
#else
  wgmma_tf32_n256(d, a, b, accumulate);
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_3xtf32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, int group_m) {
  extern __shared__ __align__(1024) unsigned char shared_bytes[];
  // The swizzle atoms start on 1024-byte boundaries: A's big parts, A's small parts, B, barriers.
  const unsigned base = (shared_address(shared_bytes) + 1023) & ~1023u;
  unsigned char* const generic_base = shared_bytes + (base - shared_address(shared_bytes));
  const unsigned a_big = base, a_small = a_big + STAGES * A_STAGE_BYTES;
  const unsigned b_stages = a_small + STAGES * A_STAGE_BYTES;
  const unsigned barriers = b_stages + STAGES * B_STAGE_BYTES;
  auto full = [&](int stage) { return barriers + 8 * stage; };
  auto split = [&](int stage) { return barriers + 8 * (STAGES + stage); };
  auto empty = [&](int stage) { return barriers + 8 * (2 * STAGES + stage); };
  auto generic = [&](unsigned address) { return generic_base + (address - base); };

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      barrier_init(full(s), 1);
      barrier_init(split(s), SPLITTERS);
      barrier_init(empty(s), 4 * WGS);  // one per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGISTERS));
    int slice = 0;  // K slices so far, over every tile of this block
    for (int tile = blockIdx.x; tile < TILES; tile += gridDim.x) {
      int row0, col0;
      tile_origin<BM, BN>(tile, group_m, row0, col0);
      for (int kt = 0; kt < K_TILES; ++kt, ++slice) {
        const int s = slice % STAGES, round = slice / STAGES;
        if (warp == 0) {
          if (lane == 0) {
            if (round > 0) wait(empty(s), (round - 1) & 1);
            arrive_expecting(full(s), A_STAGE_BYTES + B_STAGE_BYTES);
            tma_load(a_big + s * A_STAGE_BYTES, map_a, full(s), kt * BK, row0);
            tma_load(b_stages + s * B_STAGE_BYTES, map_b, full(s), col0, kt * BK);
          }
          continue;
        }
        // Split A's slice: every float in place into its big part, its small part into the
        // second buffer at the same offset (the swizzle moves both alike).
        wait(full(s), round & 1);
        float4* big = reinterpret_cast<float4*>(generic(a_big + s * A_STAGE_BYTES));
        float4* small = reinterpret_cast<float4*>(generic(a_small + s * A_STAGE_BYTES));
        for (int i = threadIdx.x - 32; i < A_STAGE_BYTES / 16; i += 32 * SPLITTERS) {
          const float4 x = big[i];
          const float4 b = make_float4(__uint_as_float(tf32_big(x.x)), __uint_as_float(tf32_big(x.y)),
                                       __uint_as_float(tf32_big(x.z)), __uint_as_float(tf32_big(x.w)));
          big[i] = b;
          small[i] = make_float4(x.x - b.x, x.y - b.y, x.z - b.z, x.w - b.w);
        }
        // The generic proxy's writes, visible to wgmma's reads (the async proxy).
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        if (lane == 0) arrive(split(s));
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGISTERS));
  const int group = warpgroup - 1;
  int slice = 0;
  for (int tile = blockIdx.x; tile < TILES; tile += gridDim.x) {
    int row0, col0;
    tile_origin<BM, BN>(tile, group_m, row0, col0);
    // This warp's 16 columns of each of its warpgroup's MI tiles of 64, as B's buffer holds them.
    const int n_local = group * 64 * MI + warp * 16 + lane / 4;
    float acc[MI][BM / 2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int j = 0; j < BM / 2; ++j) acc[mi][j] = 0.0f;
    float sums[MI][BM / 2];  // the tensor cores' sums of the current PROMOTE_EVERY slices
    // B^T's fragments of a slice's four steps of 8 k, as floats: the next slice's are read while
    // this slice's products run.
    float fragments[4][MI][4];
    auto read_fragments = [&](int slice_index) {
      const int s = slice_index % STAGES, parity = (slice_index / STAGES) & 1;
      wait(full(s), parity);
      wait(split(s), parity);
      const float* b_stage = reinterpret_cast<const float*>(generic(b_stages + s * B_STAGE_BYTES));
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
          for (int r = 0; r < 4; ++r)  // r: rows +8 (odd r) and columns +4 (r >= 2) of the fragment
            fragments[kk][mi][r] =
                b_stage[(kk * 8 + lane % 4 + (r / 2) * 4) * B_ROW + n_local + mi * 64 + (r % 2) * 8];
    };
    read_fragments(slice);
    for (int kt = 0; kt < K_TILES; ++kt, ++slice) {
      const int s = slice % STAGES;
      // Split; wgmma reads these registers until the wait below.
      unsigned big[4][MI][4], small[4][MI][4];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            big[kk][mi][r] = tf32_big(fragments[kk][mi][r]);
            small[kk][mi][r] = tf32_small(fragments[kk][mi][r], big[kk][mi][r]);
          }
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        // A's rows of k, instruction kk's 32 bytes in; 8-row groups 1024 bytes apart.
        const unsigned long long a_hi = descriptor(a_big + s * A_STAGE_BYTES + kk * 32, 16, 1024);
        const unsigned long long a_lo = descriptor(a_small + s * A_STAGE_BYTES + kk * 32, 16, 1024);
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
          // The small products first, the big one last; the group's first replaces what sums held.
          const int first = (kt % PROMOTE_EVERY == 0 && kk == 0) ? 0 : 1;
          wgmma_tf32(sums[mi], small[kk][mi], a_hi, first);
          wgmma_tf32(sums[mi], big[kk][mi], a_lo, 1);
          wgmma_tf32(sums[mi], big[kk][mi], a_hi, 1);
        }
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      if (kt + 1 < K_TILES) read_fragments(slice + 1);
      asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
      if (lane == 0) arrive(empty(s));
      if (kt % PROMOTE_EVERY == PROMOTE_EVERY - 1 || kt == K_TILES - 1)
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
          for (int j = 0; j < BM / 2; ++j) acc[mi][j] += sums[mi][j];
    }

    // wgmma's accumulator layout, transposed back: lane l of warp w holds C^T's rows (C's columns)
    // 16 w + l / 4 and 8 on, C^T's columns (C's rows) 2 (l % 4) and the next, every 8.
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int col = col0 + n_local + mi * 64;
#pragma unroll
      for (int j = 0; j < BM / 8; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int row = row0 + j * 8 + (lane % 4) * 2 + r % 2, c = col + (r / 2) * 8;
          if (row < GEMM_M && c < GEMM_N) C[static_cast<long>(row) * GEMM_N + c] = acc[mi][j * 4 + r];
        }
    }
  }
}
