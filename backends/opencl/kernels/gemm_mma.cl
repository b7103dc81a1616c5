// optune's OpenCL GEMM on NVIDIA tensor cores: C[M,N] = A[M,K] * B[K,N], row-major, no
// transposes, float32 in and out, or f16 or bf16 in and out (OPTUNE_F16, OPTUNE_BF16: storage.cl)
// with float32 sums. NVIDIA's OpenCL compiler takes inline PTX, so the kernel issues tensor-core
// instructions (mma.sync, sm_80 and later) and asynchronous copies (cp.async) itself.
//
// f16 and bf16: one m16n8k16 tensor-core product per tile and 16-deep step, summed in float32 on
// the tensor core over all of K (as cuBLAS does in these types), C rounded to the type when
// stored. Rows of A and B must be whole 16-byte pieces (K and N multiples of 8: the template's
// condition); B's fragments are read with ldmatrix.trans, A's with ldmatrix where LDSM.
// i8 (OPTUNE_I8): s8 A and B, one m16n8k32 product per tile and 32-deep step, int32 sums and C
// (exact). B's block is transposed into local memory as it is copied (through registers, 4 x 4
// bytes a work-item), so that its fragments are read as A's are. K a multiple of 16, N of 4.
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
//   CONV_ARGS        1: the arguments come as a pointwise convolution's, B (its input) before A
//                    (its filter); conv2d.opencl's GEMM of a 1 x 1 layer
//   EDGE_M, EDGE_N, EDGE_K  1 when the extent is not a multiple of its tile: copies past the
//                    matrix are zero-filled and stores are bounds-checked
// Work-group: (MWG / WM) * (NWG / WN) warps of 32 work-items along dimension 0.

#ifndef LDSM
#define LDSM 0
#endif
#ifndef SPLITK
#define SPLITK 1
#endif
#ifndef CONV_ARGS
#define CONV_ARGS 0
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

#include "storage.cl"  // elem_t, out_t, OUT_STORE; acc_t (float), the type split_k.cl sums in
#include "tile_order.cl"

#if defined(OPTUNE_F16) || defined(OPTUNE_BF16)
#define MMA16 1
#define MMA8 0
typedef ushort stage_t;  // an element as local memory holds it: the 16-bit pattern
#define PIECE 8          // elements of a 16-byte copy
#define K_STEP 16        // depth of one tensor-core product
#define PAD 8            // local rows padded by 16 bytes: ldmatrix's 8 rows on distinct banks
#elif defined(OPTUNE_I8)
#define MMA16 0
#define MMA8 1  // s8: m16n8k32 products, int32 sums; B's block transposed into local memory
typedef uchar stage_t;
#define PIECE 16
#define K_STEP 32
#define PAD 16
#else
#define MMA16 0
#define MMA8 0
typedef float stage_t;
#define PIECE 4
#define K_STEP 8
#endif

#define WARPS_N (NWG / WN)
#define THREADS ((MWG / WM) * WARPS_N * 32)
#define MT (WM / 16)  // tensor-core tiles of a warp along M
#define NT (WN / 8)   // ... along N

// Local tiles, row-major. The padding puts the 32 lanes of a fragment read on 32 distinct banks
// (float32: A's rows 4 floats apart modulo 32, B's 8; 16-bit: rows 16 bytes apart, so each 8 x 16
// byte matrix of an ldmatrix spans all banks), and keeps rows 16-byte aligned for the copies.
#if MMA16 || MMA8
#define LDA_S (KWG + PAD)
#else
#define LDA_S (KWG + 4)
#endif
#define A_STAGE (MWG * LDA_S)
#if MMA8
// int8: B's block transposed, a row of K per column n, padded as A's rows (the int8 product
// wants four neighbouring k of a column in a register, which ldmatrix cannot transpose in bytes).
#define LDBT_S (KWG + PAD)
#define B_STAGE (NWG * LDBT_S)
#else
#define LDB_S (NWG + 8)
#define B_STAGE (KWG * LDB_S)
#endif
#define A_CHUNKS (MWG * KWG / PIECE)  // 16-byte pieces of a K block of A
#define B_CHUNKS (KWG * NWG / PIECE)

#define STR_(x) #x
#define STR(x) STR_(x)

// A local pointer as the 32-bit shared-window address PTX's shared state space wants.
inline uint shared_address(__local const stage_t* p) { return (uint)(size_t)p; }

// 16 bytes global -> local without passing through registers; `bytes` < 16 zero-fills the rest
// (0 past the matrix's edge, where `src` is only a valid address, never read).
inline void copy16(__local stage_t* dst, __global const stage_t* src, uint bytes) {
#if EDGE_M || EDGE_N || EDGE_K
  __asm__ __volatile__("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes)
               : "memory");
#else
  __asm__ __volatile__("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)), "l"(src) : "memory");
#endif
}
// 4 bytes global -> local, zero-filled where `bytes` is 0: rows of A or B not 16-byte aligned
// (float32 only).
inline void copy4(__local stage_t* dst, __global const stage_t* src, uint bytes) {
  __asm__ __volatile__("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes)
               : "memory");
}
// A 16-byte piece (PIECE elements) of row `row` (of `rows`, `columns` long) from column `col` into
// `dst`; `aligned` (A_ROWS16 or B_ROWS16, a constant): the rows start 16 bytes aligned, always so
// in 16-bit types, where `columns` is a multiple of PIECE and a piece is all inside or all out.
inline void copy_piece(__local stage_t* dst, __global const stage_t* matrix, int row, int rows, int col, int columns,
                       bool aligned) {
  if (MMA16 || MMA8 || aligned) {
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
inline void copy_block(__local stage_t* as, __local stage_t* bs, __global const stage_t* A,
                       __global const stage_t* B, int tid, int m0, int n0, int block, int stage) {
  const int k0 = block * KWG;
  __local stage_t* a_stage = as + stage * A_STAGE;
  __local stage_t* b_stage = bs + stage * B_STAGE;
#pragma unroll
  for (int r = 0; r < (A_CHUNKS + THREADS - 1) / THREADS; ++r) {
    const int c = tid + r * THREADS;
    if (A_CHUNKS % THREADS != 0 && c >= A_CHUNKS) break;
    const int row = c / (KWG / PIECE), col = (c % (KWG / PIECE)) * PIECE;
    copy_piece(a_stage + row * LDA_S + col, A, m0 + row, M, k0 + col, K, A_ROWS16);
  }
#if MMA8
  // Each work-item reads 4 x 4 bytes (rows k..k + 3, columns n..n + 3: N is a multiple of 4) as
  // four words and stores them transposed: four words of columns n..n + 3, each holding k..k + 3.
#define B_QUADS (KWG * NWG / 16)
#pragma unroll
  for (int r = 0; r < (B_QUADS + THREADS - 1) / THREADS; ++r) {
    const int c = tid + r * THREADS;
    if (B_QUADS % THREADS != 0 && c >= B_QUADS) break;
    const int k = k0 + (c / (NWG / 4)) * 4, n = n0 + (c % (NWG / 4)) * 4;
    uint w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      w[i] = (k + i < K && n < N) ? *(__global const uint*)(B + (size_t)(k + i) * N + n) : 0u;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint t = ((w[0] >> (8 * j)) & 0xffu) | (((w[1] >> (8 * j)) & 0xffu) << 8) |
                     (((w[2] >> (8 * j)) & 0xffu) << 16) | (((w[3] >> (8 * j)) & 0xffu) << 24);
      *(__local uint*)(b_stage + (n - n0 + j) * LDBT_S + (k - k0)) = t;
    }
  }
#else
#pragma unroll
  for (int r = 0; r < (B_CHUNKS + THREADS - 1) / THREADS; ++r) {
    const int c = tid + r * THREADS;
    if (B_CHUNKS % THREADS != 0 && c >= B_CHUNKS) break;
    const int row = c / (NWG / PIECE), col = (c % (NWG / PIECE)) * PIECE;
    copy_piece(b_stage + row * LDB_S + col, B, k0 + row, K, n0 + col, N, B_ROWS16);
  }
#endif
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

// 16-bit types: d += a * b on one 16 x 8 x 16 tile (PTX's m16n8k16 fragments: a lane's register
// holds two neighbouring k of one row of A, or of one column of B).
#if defined(OPTUNE_BF16)
#define MMA16_TYPES "bf16.bf16"
#else
#define MMA16_TYPES "f16.f16"
#endif
#define MMA_K16(d, a, b)                                                                                \
  __asm__("mma.sync.aligned.m16n8k16.row.col.f32." MMA16_TYPES ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "      \
      "{%8,%9}, {%0,%1,%2,%3};\n"                                                                        \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                  \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
// int8: d += a * b on one 16 x 8 x 32 tile in int32 (a register holds four neighbouring k).
#define MMA_K32(d, a, b)                                                                               \
  __asm__("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "       \
      "{%0,%1,%2,%3};\n"                                                                                \
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                                                  \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
// B's fragments of two neighbouring 8-column tiles in one instruction: four 8 x 8 matrices of
// B's rows (k) read transposed, so that a lane gets two neighbouring k of one column. Lane l gives
// the address of row k0 + l % 16, columns of tile l / 16.
#define LOAD_B_FRAGMENTS(b, address)                                                                   \
  __asm__ __volatile__("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"        \
                       : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])                                  \
                       : "r"(address))

// What the 16-bit and 8-bit steps differ in: the elements of a 32-bit word, the product, and how
// a pair of B's fragments is read (ldmatrix.trans from B's rows in 16-bit types; in int8 from B's
// transposed rows, as A's) at what byte offset of a stage for K step kk and tiles j, j + 1.
#define WORD_ELEMS (4 / (int)sizeof(stage_t))
#if MMA8
#define MMA_NARROW MMA_K32
#define LOAD_B_PAIR LOAD_A_FRAGMENT
#define B_PAIR_OFFSET(kk, j) ((j) * 8 * LDBT_S + (kk))
#else
#define MMA_NARROW MMA_K16
#define LOAD_B_PAIR LOAD_B_FRAGMENTS
#define B_PAIR_OFFSET(kk, j) (sizeof(stage_t) * ((kk) * LDB_S + (j) * 8))
#endif

#if SPLITK > 1
#include "split_k.cl"
#endif

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
#if CONV_ARGS  // a pointwise convolution's GEMM: its input (B, [C][H*W]) comes before its filter (A)
void optune_gemm_mma(__global const stage_t* restrict B, __global const stage_t* restrict A,
                     __global out_t* restrict C
#else
void optune_gemm_mma(__global const stage_t* restrict A, __global const stage_t* restrict B,
                     __global out_t* restrict C
#endif
#if SPLITK > 1
                     , __global uint* restrict scratch
#endif
) {
  const int tid = get_local_id(0);
  const int warp = tid / 32, lane = tid % 32;
  // A fragment's lane owns rows g and g + 8, columns t and t + 4 (PTX's groupID, threadID_in_group).
  const int g = lane / 4, t = lane % 4;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const int2 origin = tile_origin();  // tile_order.cl
  const int n0 = origin.x, m0 = origin.y;

  __local stage_t as[STAGES * A_STAGE] __attribute__((aligned(16)));
  __local stage_t bs[STAGES * B_STAGE] __attribute__((aligned(16)));

#if LDSM
  // Byte offset of the row this lane addresses for ldmatrix, within a stage of A: row l % 16 of
  // the tile, the second 16 bytes of its K step for lanes 16-31.
  const uint a_matrix_row = sizeof(stage_t) * ((wm0 + lane % 16) * LDA_S + (lane / 16) * PIECE);
#endif
#if MMA16
  // ... and of B's row (k) and tile pair this lane addresses for ldmatrix.trans.
  const uint b_matrix_row = sizeof(stage_t) * ((lane % 16) * LDB_S + wn0 + (lane / 16) * 8);
#elif MMA8
  // ... and of B's transposed row (column n) for ldmatrix: lanes 0-7 the tile's 8 columns at k
  // 0-15, lanes 8-15 at k 16-31, lanes 16-31 the same for the next tile.
  const uint b_matrix_row = (wn0 + (lane / 16) * 8 + lane % 8) * LDBT_S + ((lane / 8) % 2) * 16;
#endif
  acc_t acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0;

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

#if MMA16 || MMA8
    const uint a_base = shared_address(as + (block % STAGES) * A_STAGE);
    const uint b_base = shared_address(bs + (block % STAGES) * B_STAGE);
    // Scalar reads of A's fragments: row g (+ 8), the 32-bit word of k WORD_ELEMS * t on (+ half
    // a step).
    __local const uint* a_words =
        (__local const uint*)(as + (block % STAGES) * A_STAGE + (wm0 + g) * LDA_S + WORD_ELEMS * t);
#pragma unroll
    for (int kk = 0; kk < KWG; kk += K_STEP) {
      uint a[MT][4], b[NT][2];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
#if LDSM
        LOAD_A_FRAGMENT(a[i], a_base + a_matrix_row + sizeof(stage_t) * (i * 16 * LDA_S + kk));
#else
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[i][r] = a_words[((i * 16 + (r % 2) * 8) * LDA_S + kk + (r / 2) * (K_STEP / 2)) / WORD_ELEMS];
#endif
      }
#pragma unroll
      for (int j = 0; j < NT; j += 2) {
        uint pair[4];
        LOAD_B_PAIR(pair, b_base + b_matrix_row + B_PAIR_OFFSET(kk, j));
        b[j][0] = pair[0];
        b[j][1] = pair[1];
        b[j + 1][0] = pair[2];
        b[j + 1][1] = pair[3];
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) MMA_NARROW(acc[i][j], a[i], b[j]);
    }
#else
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
#endif
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
        if (n < N) OUT_STORE(C, m * N + n, acc[i][j][2 * h]);
        if (n + 1 < N) OUT_STORE(C, m * N + n + 1, acc[i][j][2 * h + 1]);
#elif MMA16
        OUT_STOREV(2, C, m * N + n, (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]));
#elif MMA8
        OUT_STOREV(2, C, m * N + n, (int2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]));
#else
        *(__global float2*)(C + m * N + n) = (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
#endif
      }
    }
}
