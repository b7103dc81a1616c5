// optune's OpenCL int8 GEMM on packed quads: C[M,N] = A[M,K] * B[K,N], row-major, s8 A and B,
// int32 C (exact). Four neighbouring k of a row of A, or of a column of B, travel as one 32-bit
// word, and each step of the inner loop multiplies two such words into an int32 sum:
//   - on NVIDIA (whose compiler defines cl_nv_pragma_unroll and takes inline PTX): dp4a, one
//     instruction for four multiply-adds;
//   - where the device has cl_khr_integer_dot_product's packed 4 x 8-bit input: dot_4x8packed_ss_int;
//   - elsewhere the four bytes are widened and multiplied one by one (PoCL in CI runs this path,
//     and with it the packing every path shares).
// The int8 operands are a quarter of float32's bytes, and so are their local tiles per k.
//
// A work-group computes an MWG x NWG tile with MDIMC x NDIMC work-items; each work-item
// MWG/MDIMC x NWG/NDIMC outputs, its rows and columns strided by MDIMC and NDIMC, so neighbouring
// work-items read neighbouring words of local memory. Per K block (KWG deep, a multiple of 4) the
// work-group packs A's block (KWG/4 words per row, read as char4) and B's (four bytes of a column
// per word) into local memory, then every work-item runs KWG/4 steps of its dot products.
// Defines (from gemm.opencl's dot4 space): M N K, MWG NWG KWG, MDIMC NDIMC, GSW (bands of row
// tiles, as gemm.cl), EDGE_M EDGE_N EDGE_K (the extent is no multiple of its tile: bounds are
// checked; K itself is a multiple of 4, the template's condition).

#include "tile_order.cl"

#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define THREADS (MDIMC * NDIMC)
#define KQ (KWG / 4)  // packed words per row of a K block
// Local rows padded by one word: the column-wise stores of A's words spread over the banks.
#define LDA (MWG + 1)
#define LDB (NWG + 1)

// c + the dot product of the four s8 lanes of a and b.
inline int dot4(int a, int b, int c) {
#if defined(cl_nv_pragma_unroll)
  int d;
  __asm__("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#elif defined(__opencl_c_integer_dot_product_input_4x8bit_packed)
  return c + dot_4x8packed_ss_int((uint)a, (uint)b);
#else
  const char4 x = as_char4(a), y = as_char4(b);
  return c + (int)x.s0 * y.s0 + (int)x.s1 * y.s1 + (int)x.s2 * y.s2 + (int)x.s3 * y.s3;
#endif
}

// Four k of column n of B, k0 to k0 + 3, as one word (k0 in the low byte, as char4's s0).
inline int b_word(__global const char* restrict B, int k0, int n) {
  const uchar4 bytes = (uchar4)(B[k0 * N + n], B[(k0 + 1) * N + n], B[(k0 + 2) * N + n], B[(k0 + 3) * N + n]);
  return as_int(bytes);
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void optune_gemm_dot4(__global const char* restrict A, __global const char* restrict B, __global int* restrict C) {
  const int tn = get_local_id(0), tm = get_local_id(1);
  const int tid = tm * NDIMC + tn;
  const int2 origin = tile_origin();  // tile_order.cl
  const int n0 = origin.x, m0 = origin.y;
  __local int as[KQ * LDA];
  __local int bs[KQ * LDB];

  int acc[MWI][NWI];
#pragma unroll
  for (int i = 0; i < MWI; ++i)
#pragma unroll
    for (int j = 0; j < NWI; ++j) acc[i][j] = 0;

  for (int k0 = 0; k0 < K; k0 += KWG) {
    // A's block: word q of row m is A[m0 + m][k0 + 4q .. + 3]; neighbouring work-items read
    // neighbouring words of a row. Past the matrix: zero.
    for (int idx = tid; idx < MWG * KQ; idx += THREADS) {
      const int m = idx / KQ, q = idx % KQ;
      const bool inside = (!EDGE_M || m0 + m < M) && (!EDGE_K || k0 + 4 * q < K);
      as[q * LDA + m] = inside ? as_int(vload4(0, A + (size_t)(m0 + m) * K + k0 + 4 * q)) : 0;
    }
    // B's block: word q of column n packs B[k0 + 4q .. + 3][n0 + n]; neighbouring work-items read
    // neighbouring columns.
    for (int idx = tid; idx < NWG * KQ; idx += THREADS) {
      const int n = idx % NWG, q = idx / NWG;
      const bool inside = (!EDGE_N || n0 + n < N) && (!EDGE_K || k0 + 4 * q < K);
      bs[q * LDB + n] = inside ? b_word(B, k0 + 4 * q, n0 + n) : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int q = 0; q < KQ; ++q) {
      int a[MWI], b[NWI];
#pragma unroll
      for (int i = 0; i < MWI; ++i) a[i] = as[q * LDA + tm + i * MDIMC];
#pragma unroll
      for (int j = 0; j < NWI; ++j) b[j] = bs[q * LDB + tn + j * NDIMC];
#pragma unroll
      for (int i = 0; i < MWI; ++i)
#pragma unroll
        for (int j = 0; j < NWI; ++j) acc[i][j] = dot4(a[i], b[j], acc[i][j]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the block before the next overwrites it
  }

#pragma unroll
  for (int i = 0; i < MWI; ++i) {
    const int m = m0 + tm + i * MDIMC;
#pragma unroll
    for (int j = 0; j < NWI; ++j) {
      const int n = n0 + tn + j * NDIMC;
      if ((!EDGE_M || m < M) && (!EDGE_N || n < N)) C[(size_t)m * N + n] = acc[i][j];
    }
  }
}
