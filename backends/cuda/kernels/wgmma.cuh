// Hopper's warpgroup MMA as the 16-bit and fp8 GEMM kernels use it (gemm_wgmma.cu, gemm_tma.cu):
// operands in the 128-byte swizzled layout (hopper.cuh's descriptors), wgmma.mma_async with float32 accumulators
// (m64nNk16 for 16-bit types, m64nNk32 for fp8), both operands from shared memory, one K slice
// of a stage (128 bytes deep: 64 16-bit or 128 fp8 elements), and the accumulators' stores into C.
// A is K-major; B MN-major (the transpose flag) for 16-bit types, or K-major (B_K_MAJOR: a
// convolution's filter, and fp8, which has no transpose flag).
// Defines read: BN (64, 128, 192 or 256); B_K_MAJOR; MMA_TYPE, OPTUNE_E4M3, GEMM_M, GEMM_N (gemm_common.cuh).
#pragma once

#include "hopper.cuh"

#if defined(OPTUNE_E4M3) && !defined(B_K_MAJOR)
#define B_K_MAJOR
#endif

// The instruction for N = n, and its operands' transpose flags (A as is; B transposed unless
// K-major; fp8 takes none).
#ifdef OPTUNE_E4M3
#define WGMMA_OP(n) "wgmma.mma_async.sync.aligned.m64n" n "k32.f32.e4m3.e4m3"
#define WGMMA_TRANSPOSE ""
#else
#define WGMMA_OP(n) "wgmma.mma_async.sync.aligned.m64n" n "k16.f32." MMA_TYPE "." MMA_TYPE
#ifdef B_K_MAJOR
#define WGMMA_TRANSPOSE ", 0, 0"
#else
#define WGMMA_TRANSPOSE ", 0, 1"
#endif
#endif

__device__ inline void wgmma_n64(float* d, unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      WGMMA_OP("64") " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1" WGMMA_TRANSPOSE ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_n128(float* d, unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      WGMMA_OP("128") " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1" WGMMA_TRANSPOSE ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_n192(float* d, unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
      WGMMA_OP("192") " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95}, %96, %97, p, 1, 1" WGMMA_TRANSPOSE ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ inline void wgmma_n256(float* d, unsigned long long desc_a, unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      WGMMA_OP("256") " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1" WGMMA_TRANSPOSE ";\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}


// d += a * b, or d = a * b where `accumulate` is 0.
__device__ inline void wgmma(float* d, unsigned long long a, unsigned long long b, int accumulate) {
#if BN == 64
  wgmma_n64(d, a, b, accumulate);
#elif BN == 128
  wgmma_n128(d, a, b, accumulate);
#elif BN == 192
  wgmma_n192(d, a, b, accumulate);
#else
  wgmma_n256(d, a, b, accumulate);
#endif
}

constexpr int WGMMA_SLAB_BYTES = 64 * 128;  // 16-bit B's slab: 64 n of each of a slice's 64 k

// One K slice (128 bytes deep, four instructions of 32 bytes) into `acc`: A's Tiles tiles of 64
// rows from `a_rows` (K-major rows of 128 bytes); B from `b_stage`: MN-major slabs of 64 n, or
// (B_K_MAJOR) K-major rows of 128 bytes as A. `fresh`: the slice's products replace what `acc` held.
// Issued, not waited for (wgmma.commit/wait_group).
template <int Tiles>
__device__ inline void wgmma_slice(float (&acc)[Tiles][BN / 2], unsigned a_rows, unsigned b_stage,
                                   bool fresh = false) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
#ifdef B_K_MAJOR
    // B: BN rows of n, instruction kk's 32 bytes in; 8-row groups 1024 bytes apart.
    const unsigned long long b = descriptor(b_stage + kk * 32, 16, 1024);
#else
    // B: slabs WGMMA_SLAB_BYTES apart (leading), 8-k groups 1024 bytes apart (stride).
    const unsigned long long b = descriptor(b_stage + kk * 16 * 128, WGMMA_SLAB_BYTES, 1024);
#endif
#pragma unroll
    for (int mi = 0; mi < Tiles; ++mi) {
      // A: tile mi's 64 rows, instruction kk's 32 bytes in; 8-row groups 1024 bytes apart.
      const unsigned long long a = descriptor(a_rows + mi * 64 * 128 + kk * 32, 16, 1024);
      wgmma(acc[mi], a, b, fresh && kk == 0 ? 0 : 1);
    }
  }
}

// The warpgroup's Tiles tiles of 64 rows from row `row0` and BN columns from `col0`, times `scale`,
// into C (row-major, GEMM_M x GEMM_N), rows and columns past its edges left alone. wgmma's accumulator layout: warp w
// holds rows 16 w to 16 w + 15, lane l rows l / 4 and l / 4 + 8, columns 2 (l % 4) and the next,
// every 8 columns.
template <int Tiles>
__device__ inline void store_accumulators(out_element* C, const float (&acc)[Tiles][BN / 2], int row0, int col0,
                                          float scale = 1.0f) {
  const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int mi = 0; mi < Tiles; ++mi) {
    const int row = row0 + mi * 64 + warp * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int col = col0 + j * 8 + (lane % 4) * 2;
      if (col >= GEMM_N) continue;
      out_element2* out = reinterpret_cast<out_element2*>(C + static_cast<long>(row) * GEMM_N + col);
      if (row < GEMM_M) out[0] = to_out_element2(scale * acc[mi][j * 4 + 0], scale * acc[mi][j * 4 + 1]);
      if (row + 8 < GEMM_M)
        out[4 * GEMM_N] = to_out_element2(scale * acc[mi][j * 4 + 2], scale * acc[mi][j * 4 + 3]);
    }
  }
}

constexpr int STORE_PIECE_BYTES = 64 * 128;  // a 64 x 64 piece of 16-bit C: 64 rows of 128 bytes

// The same as store_accumulators, through shared memory and the Tensor Memory Accelerator: each
// 64 x 64 piece goes into one of two staging buffers at `buffers` (STORE_PIECE_BYTES each, 1024-byte
// aligned) in the 128-byte swizzle (so the accumulator layout's rows write conflict-free), and one
// thread of the warpgroup copies it out with `map_c` (boxes of 64 x 64; edges clipped there); a
// buffer is written again once its previous copy has read it. `stores` counts the warpgroup's
// copies so far (the buffers alternate across tiles); named barrier `barrier` is the warpgroup's.
// The copies are left running: drain_stores() before the block ends.
template <int Tiles>
__device__ inline void store_accumulators_tma(const TensorMap& map_c, const float (&acc)[Tiles][BN / 2], int row0,
                                              int col0, float scale, unsigned buffers, unsigned barrier, int& stores) {
  const int thread = threadIdx.x % 128, warp = thread / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int mi = 0; mi < Tiles; ++mi) {
#pragma unroll
    for (int piece = 0; piece < BN / 64; ++piece, ++stores) {
      const unsigned buffer = buffers + (stores % 2) * STORE_PIECE_BYTES;
      if (thread == 0) bulk_wait_read<1>();  // the copy that last read this buffer is done with it
      named_barrier(barrier, 128);
      // stmatrix: four 8 x 8 matrices an instruction, each thread's register m the pair it holds
      // of matrix m (the accumulators' layout is stmatrix's), lane l giving row l % 8 of matrix
      // l / 8. Matrices: rows 0-7 and 8-15 of the warp's 16, times 8-column groups j and j + 1.
#pragma unroll
      for (int jp = 0; jp < 4; ++jp) {
        unsigned pairs[4];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const int a = (piece * 8 + 2 * jp + m / 2) * 4 + (m % 2) * 2;
          const out_element2 pair = to_out_element2(scale * acc[mi][a], scale * acc[mi][a + 1]);
          pairs[m] = *reinterpret_cast<const unsigned*>(&pair);
        }
        const int m = lane / 8, row = warp * 16 + (m % 2) * 8 + lane % 8, j = 2 * jp + m / 2;
        const unsigned address = buffer + row * 128 + ((j ^ (row & 7)) << 4);
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address),
                     "r"(pairs[0]), "r"(pairs[1]), "r"(pairs[2]), "r"(pairs[3])
                     : "memory");
      }
      fence_async_shared();
      named_barrier(barrier, 128);
      if (thread == 0) {
        tma_store(map_c, buffer, col0 + piece * 64, row0 + mi * 64);
        bulk_commit();
      }
    }
  }
}

// Before the block ends: every copy of store_accumulators_tma has read its shared memory.
__device__ inline void drain_stores() {
  if (threadIdx.x % 128 == 0) bulk_wait_read<0>();
}

