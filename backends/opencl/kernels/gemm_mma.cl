// optune's OpenCL GEMM on NVIDIA tensor cores, float32 in and out: C[M,N] = A[M,K] * B[K,N],
// row-major, no transposes. NVIDIA's OpenCL compiler takes inline PTX, so the kernel issues
// tensor-core instructions (mma.sync, sm_80 and later) and asynchronous copies (cp.async) itself.
//
// Precision: tensor cores multiply TF32 (10 mantissa bits), too coarse for a float32 GEMM. Each
// operand is split into its TF32 rounding and the float remainder (x = big + small), and every
// product is summed from three tensor-core products, a_small * b_big + a_big * b_small +
// a_big * b_big (the "3xTF32" scheme of CUTLASS's fast-accurate FP32). The dropped
// a_small * b_small and the truncation of the small parts are about 2^-22 of each product, and the
// three products of each 8-deep step are added to float32 accumulators with a rounded float add:
// the result is more accurate than a float32 FMA loop's (5.3e-8 of the products' magnitude
// against cuBLAS FP32's 3.7e-7 at 4096), and it is checked against the reference like any
// candidate.
//
// Knobs (preprocessor defines, from the gemm.opencl template's tensor-core space):
//   M, N, K          the shape
//   A_ROWS16         1 when K is a multiple of 4: every 4-float piece of A starts 16 bytes
//                    aligned and is copied in one instruction; 0: element by element
//   B_ROWS16         the same for B, when N is a multiple of 4
//   MWG, NWG, KWG    work-group tile in M and N, K block (one pipeline stage)
//   WM, WN           a warp's tile: (WM / 16) x (WN / 8) tensor-core tiles of 16 x 8
//   STAGES           K blocks in flight in local memory (2-4): block b + STAGES - 1 is being
//                    copied while block b is multiplied, one barrier per block
//   LDSM             1: A's fragments read with ldmatrix (one instruction per 16 x 8 tile); 0:
//                    four scalar local reads
//   GSW              >1: work-groups numbered in bands of GSW row tiles (L2 reuse); 1: row by row
//   SPLITK           >1: K is split into SPLITK ranges of whole K blocks, one per work-group along
//                    dimension 2; each work-item's last split to finish adds the partial values
//                    and stores the sum (split_k.cl; the kernel's fourth argument is the scratch);
//                    1: one work-group per tile stores it
//   EDGE_M, EDGE_N, EDGE_K  1 when the extent is not a multiple of its tile: copies past the
//                    matrix are zero-filled and stores are bounds-checked
// Work-group: (MWG / WM) * (NWG / WN) warps of 32 work-items along dimension 0.

#ifndef GSW
#define GSW 1
#endif
#ifndef LDSM
#define LDSM 0
#endif
#ifndef SPLITK
#define SPLITK 1
#endif
#if defined(ROWS16) && !defined(A_ROWS16)  // build options stored before the flag was split in two
#define A_ROWS16 ROWS16
#define B_ROWS16 ROWS16
#endif
#ifndef A_ROWS16
#define A_ROWS16 1
#endif
#ifndef B_ROWS16
#define B_ROWS16 1
#endif

#define WARPS_N (NWG / WN)
#define THREADS ((MWG / WM) * WARPS_N * 32)
#define MT (WM / 16)  // tensor-core tiles of a warp along M
#define NT (WN / 8)   // ... along N

// Local tiles, row-major. The padding puts the 32 lanes of a fragment read on 32 distinct banks
// (A: rows 4 floats apart modulo 32; B: rows 8 floats apart), and keeps rows 16-byte aligned for
// the copies.
#define LDA_S (KWG + 4)
#define LDB_S (NWG + 8)
#define A_STAGE (MWG * LDA_S)
#define B_STAGE (KWG * LDB_S)
#define A_CHUNKS (MWG * KWG / 4)  // 16-byte pieces of a K block of A
#define B_CHUNKS (KWG * NWG / 4)

#define STR_(x) #x
#define STR(x) STR_(x)

// A local pointer as the 32-bit shared-window address PTX's shared state space wants.
inline uint shared_address(__local const float* p) { return (uint)(size_t)p; }

// 16 bytes global -> local without passing through registers; `bytes` < 16 zero-fills the rest
// (0 past the matrix's edge, where `src` is only a valid address, never read).
inline void copy16(__local float* dst, __global const float* src, uint bytes) {
#if EDGE_M || EDGE_N || EDGE_K
  __asm__ __volatile__("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes)
               : "memory");
#else
  __asm__ __volatile__("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)), "l"(src) : "memory");
#endif
}
// 4 bytes global -> local, zero-filled where `bytes` is 0: rows of A or B not 16-byte aligned.
inline void copy4(__local float* dst, __global const float* src, uint bytes) {
  __asm__ __volatile__("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes)
               : "memory");
}
// A 4-float piece of row `row` (of `rows`, `columns` long) from column `col` into `dst`;
// `aligned` (A_ROWS16 or B_ROWS16, a constant): the rows start 16 bytes aligned.
inline void copy_piece(__local float* dst, __global const float* matrix, int row, int rows, int col, int columns,
                       bool aligned) {
  if (aligned) {
    const bool inside = row < rows && col < columns;
    copy16(dst, inside ? matrix + row * columns + col : matrix, inside ? 16 : 0);
    return;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const bool inside = row < rows && col + e < columns;
    copy4(dst + e, inside ? matrix + row * columns + col + e : matrix, inside ? 4 : 0);
  }
}
inline void commit_copies(void) { __asm__ __volatile__("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most STAGES - 2 groups of this work-item's copies are in flight: the oldest
// block has landed.
#if STAGES == 2
#define IN_FLIGHT 0
#elif STAGES == 3
#define IN_FLIGHT 1
#else
#define IN_FLIGHT 2
#endif
inline void wait_oldest_block(void) { __asm__ __volatile__("cp.async.wait_group " STR(IN_FLIGHT) ";\n" ::: "memory"); }

// K block `block` of A and B into stage `stage`: each work-item copies its share of 16-byte pieces.
inline void copy_block(__local float* as, __local float* bs, __global const float* A, __global const float* B,
                       int tid, int m0, int n0, int block, int stage) {
  const int k0 = block * KWG;
  __local float* a_stage = as + stage * A_STAGE;
  __local float* b_stage = bs + stage * B_STAGE;
#pragma unroll
  for (int r = 0; r < (A_CHUNKS + THREADS - 1) / THREADS; ++r) {
    const int c = tid + r * THREADS;
    if (A_CHUNKS % THREADS != 0 && c >= A_CHUNKS) break;
    const int row = c / (KWG / 4), col = (c % (KWG / 4)) * 4;
    copy_piece(a_stage + row * LDA_S + col, A, m0 + row, M, k0 + col, K, A_ROWS16);
  }
#pragma unroll
  for (int r = 0; r < (B_CHUNKS + THREADS - 1) / THREADS; ++r) {
    const int c = tid + r * THREADS;
    if (B_CHUNKS % THREADS != 0 && c >= B_CHUNKS) break;
    const int row = c / (NWG / 4), col = (c % (NWG / 4)) * 4;
    copy_piece(b_stage + row * LDB_S + col, B, k0 + row, K, n0 + col, N, B_ROWS16);
  }
}

// x = big + small: big is x rounded to TF32 (nearest, ties away, as cvt.rna.tf32.f32 rounds;
// two integer operations measured faster than that instruction), small the exact float
// remainder, which the tensor core truncates to TF32 (rounding it too measured 5-10% slower for
// no gain that shows in the error).
inline uint tf32_big(float x) { return (as_uint(x) + 0x1000u) & 0xffffe000u; }
inline uint tf32_small(float x, uint big) { return as_uint(x - as_float(big)); }

// d += a * b on one 16 x 8 x 8 tensor-core tile (fragments as PTX's m16n8k8 .tf32 layout).
#define MMA(d, a, b)                                                                                      \
  __asm__("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "        \
      "{%0,%1,%2,%3};\n"                                                                                  \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                  \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

// A's fragment of one 16 x 8 tile in one instruction: four 8 x 8 matrices of 16-bit pairs are
// 8 rows x 4 floats each, which ldmatrix hands out exactly as the .tf32 A fragment wants them
// (lane 4g + t gets row g, column t). Lane l gives the address of row l % 16, columns 4 (l / 16).
#define LOAD_A_FRAGMENT(a, address)                                                                \
  __asm__ __volatile__("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"          \
                       : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])                              \
                       : "r"(address))

#if SPLITK > 1
#include "storage.cl"  // acc_t, the type split_k.cl sums in: float here
#include "split_k.cl"
#endif

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void optune_gemm_mma(__global const float* restrict A, __global const float* restrict B,
                     __global float* restrict C
#if SPLITK > 1
                     , __global uint* restrict scratch
#endif
) {
  const int tid = get_local_id(0);
  const int warp = tid / 32, lane = tid % 32;
  // A fragment's lane owns rows g and g + 8, columns t and t + 4 (PTX's groupID, threadID_in_group).
  const int g = lane / 4, t = lane % 4;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
#if GSW > 1
  // Consecutive group ids take the tiles of a band of GSW rows, column after column.
  const int groups_n = get_num_groups(0), groups_m = get_num_groups(1);
  const int id = get_group_id(1) * groups_n + get_group_id(0);
  const int band = id / (GSW * groups_n), first_row = band * GSW;
  const int band_rows = min(GSW, groups_m - first_row), in_band = id % (GSW * groups_n);
  const int n0 = (in_band / band_rows) * NWG, m0 = (first_row + in_band % band_rows) * MWG;
#else
  const int n0 = get_group_id(0) * NWG, m0 = get_group_id(1) * MWG;
#endif

  __local float as[STAGES * A_STAGE] __attribute__((aligned(16)));
  __local float bs[STAGES * B_STAGE] __attribute__((aligned(16)));

#if LDSM
  // Byte offset of the row this lane addresses for ldmatrix, within a stage of A.
  const uint a_matrix_row = 4 * ((wm0 + lane % 16) * LDA_S + (lane / 16) * 4);
#endif
  float acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  // This work-group's K blocks: [first, last), all of K without a split.
#if SPLITK > 1
  const int per_split = ((K + KWG - 1) / KWG + SPLITK - 1) / SPLITK;
  const int first = get_group_id(2) * per_split, last = min(first + per_split, (K + KWG - 1) / KWG);
  const int blocks = max(0, last - first);  // an idle split still counts its (zero) partial
#else
  const int first = 0, blocks = (K + KWG - 1) / KWG;
#endif
  // The first STAGES - 1 blocks in flight; every step commits one group, empty or not, so the
  // wait below always counts the same. Stage s holds the blocks first + s, first + s + STAGES, ...
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < blocks) copy_block(as, bs, A, B, tid, m0, n0, first + s, s);
    commit_copies();
  }

  for (int block = 0; block < blocks; ++block) {
    wait_oldest_block();
    // Everyone's copies of this block are visible, and everyone is done with block - 1, whose
    // stage the next copy overwrites.
    barrier(CLK_LOCAL_MEM_FENCE);
    const int next = block + STAGES - 1;
    if (next < blocks) copy_block(as, bs, A, B, tid, m0, n0, first + next, next % STAGES);
    commit_copies();

    __local const float* a_stage = as + (block % STAGES) * A_STAGE + (wm0 + g) * LDA_S + t;
    __local const float* b_stage = bs + (block % STAGES) * B_STAGE + t * LDB_S + wn0 + g;
#pragma unroll
    for (int kk = 0; kk < KWG; kk += 8) {
      uint a_big[MT][4], a_small[MT][4], b_big[NT][2], b_small[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
#if LDSM
        uint bits[4];
        LOAD_A_FRAGMENT(bits, a_matrix_row + shared_address(as + (block % STAGES) * A_STAGE) +
                                  4 * (i * 16 * LDA_S + kk));
#endif
#pragma unroll
        for (int r = 0; r < 4; ++r) {
#if LDSM
          const float x = as_float(bits[r]);
#else
          const float x = a_stage[(i * 16 + (r % 2) * 8) * LDA_S + kk + (r / 2) * 4];
#endif
          a_big[i][r] = tf32_big(x);
          a_small[i][r] = tf32_small(x, a_big[i][r]);
        }
      }
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const float y = b_stage[(kk + r * 4) * LDB_S + j * 8];
          b_big[j][r] = tf32_big(y);
          b_small[j][r] = tf32_small(y, b_big[j][r]);
        }
      // Small terms first, the large one last; each pass is MT x NT independent products, so
      // no product waits on the one before it.
      // Each tile's three products are summed on the tensor core from zero, then added to the
      // accumulator with a float add. The tensor core's own accumulation truncates: summed
      // there over all of K, the accumulators drifted to 1.8e-6 of the products' magnitude at
      // K = 4096 (cuBLAS FP32: 3.7e-7); folded every 8 k, 5.3e-8.
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          MMA(p, a_small[i], b_big[j]);
          MMA(p, a_big[i], b_small[j]);
          MMA(p, a_big[i], b_big[j]);
#pragma unroll
          for (int r = 0; r < 4; ++r) acc[i][j][r] += p[r];
        }
    }
  }

#if SPLITK > 1
  if (!sum_splits(&acc[0][0][0], MT * NT * 4, THREADS, tid, scratch)) return;
#endif
  // A lane holds rows g and g + 8 of each tile, columns 2t and 2t + 1.
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + wm0 + i * 16 + h * 8 + g;
#if EDGE_M
      if (m >= M) continue;
#endif
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int n = n0 + wn0 + j * 8 + 2 * t;
#if EDGE_N
        if (n < N) C[m * N + n] = acc[i][j][2 * h];
        if (n + 1 < N) C[m * N + n + 1] = acc[i][j][2 * h + 1];
#else
        *(__global float2*)(C + m * N + n) = (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
#endif
      }
    }
}
