// optune's OpenCL GEMM: C[M,N] = A[M,K] * B[K,N], row-major, no transposes; float32 arithmetic,
// local memory and accumulation, with A, B and C stored in float32, or in f16 (OPTUNE_F16) or
// bf16 (OPTUNE_BF16), converted as they are loaded and stored; or s8 A and B widened to int as
// they are loaded, int32 arithmetic and an int32 C (OPTUNE_I8). storage.cl defines the types.
// One work-group computes an MWG x NWG tile of C with MDIMC x NDIMC work-items; each work-item
// computes MWI x NWI = (MWG / MDIMC) x (NWG / NDIMC) outputs in registers (up to 16 x 8). The
// knobs (CLBlast's Xgemm parameters are the model) arrive as preprocessor defines from the
// gemm.opencl template:
//   M, N, K          the shape
//   MWG, NWG, KWG    work-group tile in M and N, K block (one local-memory step)
//   MDIMC, NDIMC     work-items per work-group in M (dimension 1) and N (dimension 0)
//   VWM, VWN         vector widths: local reads of A along M; local reads of B, global loads of
//                    B (without SB) and stores of C along N
//   SA, SB           1: cache the K block of A (B) in local memory; 0: read it from global memory
//   DB               1: two local buffers, the next K block is stored while the current one is
//                    read (one barrier per block; the loop takes two blocks per iteration, so
//                    each buffer sits at a constant offset); 0: one buffer, two barriers per block
//   STRM, STRN       1: a work-item's rows (columns) are strided, vector by vector, over the
//                    tile, so neighbours touch neighbouring addresses; 0: they are contiguous
//   KWI              unroll factor of the K loop
//   WLAY             0: a warp's 32 work-items are a row of the NDIMC x MDIMC grid (or two);
//                    1: they form a 8 x 4 (N x M) block of it, so a warp reads fewer distinct
//                    values of A and B from local memory per step (NVIDIA's warps of 32)
//   GSW              >1: work-groups are numbered in bands of GSW row tiles, walked column by
//                    column, so the groups running at one time share B's column tiles and A's
//                    row tiles in L2 (large matrices); 1: row by row
//   EDGE_M, EDGE_N, EDGE_K  1 when the extent is not a multiple of its tile: bounds are checked
//   SPLITK           >1: K is split into SPLITK ranges of whole K blocks, one per work-group along
//                    dimension 2; each work-item's last split to finish adds the partial values
//                    and stores the sum (split_k.cl; the kernel's fourth argument is the scratch);
//                    1: one work-group per tile stores it
//
// The K loop is software-pipelined: each work-item loads its share of the next K block from
// global memory into registers (4-vectors where the shape allows) before computing on the current
// block from local memory, so global latency hides behind the multiply-adds. A sits transposed
// in local memory (As[k][m]) so that a work-item reads its rows as vectors; its row stride is
// padded so the transposing stores spread over the banks.
// Edge handling keeps the fast path clean: local tiles are zero-filled past the matrix; direct
// global reads clamp rows and columns (their results are never stored) and stop the K loop at K.

#ifndef DB
#define DB 0
#endif
#ifndef WLAY
#define WLAY 0
#endif
#ifndef SPLITK
#define SPLITK 1
#endif

#include "storage.cl"
#include "tile_order.cl"

// Vectors of global memory. float32's are aligned here (the template keeps offsets multiples of
// the width): pointer casts, the code the float32 kernel has always had.
#if defined(OPTUNE_F16) || defined(OPTUNE_BF16) || defined(OPTUNE_I8)
#define GLOBAL_LOADV(n, p, i) ELEM_LOADV(n, p, i)
#define GLOBAL_STOREV(n, p, i, v) OUT_STOREV(n, p, i, v)
#else
#define GLOBAL_LOADV(n, p, i) (*(__global const STORAGE_CAT(float, n)*)((p) + (i)))
#define GLOBAL_STOREV(n, p, i, v) (*(__global STORAGE_CAT(float, n)*)((p) + (i)) = (v))
#endif

#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define THREADS (MDIMC * NDIMC)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if VWN == 1
typedef acc_t accN;
#else
typedef CAT(ACC_T, VWN) accN;
#endif
#if VWM == 1
typedef acc_t accM;
#else
typedef CAT(ACC_T, VWM) accM;
#endif

// VWN elements of global memory at p + i as an accN, and back.
#if VWN == 1
#define ELEM_LOADN(p, i) ELEM_LOAD(p, i)
#define OUT_STOREN(p, i, v) OUT_STORE(p, i, v)
#else
#define ELEM_LOADN(p, i) GLOBAL_LOADV(VWN, p, i)
#define OUT_STOREN(p, i, v) GLOBAL_STOREV(VWN, p, i, v)
#endif

// Copies the components of a vector into consecutive array elements.
#define UNPACK1(arr, i, v) arr[(i)] = (v);
#define UNPACK2(arr, i, v) arr[(i)] = (v).s0; arr[(i) + 1] = (v).s1;
#define UNPACK4(arr, i, v) UNPACK2(arr, i, (v).s01) UNPACK2(arr, (i) + 2, (v).s23)
#define UNPACK8(arr, i, v) UNPACK4(arr, i, (v).s0123) UNPACK4(arr, (i) + 4, (v).s4567)
#define PACK1(arr, i) (arr[(i)])
#define PACK2(arr, i) ((CAT(ACC_T, 2))(arr[(i)], arr[(i) + 1]))
#define PACK4(arr, i) ((CAT(ACC_T, 4))(PACK2(arr, i), PACK2(arr, (i) + 2)))
#define PACK8(arr, i) ((CAT(ACC_T, 8))(PACK4(arr, i), PACK4(arr, (i) + 4)))

// Tile-local row of a work-item's i-th row (i in [0, MWI)) and column of its j-th column.
#if STRM
#define ROW(tm, i) (((i) / VWM) * (MDIMC * VWM) + (tm) * VWM + (i) % VWM)
#else
#define ROW(tm, i) ((tm) * MWI + (i))
#endif
#if STRN
#define COL(tn, j) (((j) / VWN) * (NDIMC * VWN) + (tn) * VWN + (j) % VWN)
#else
#define COL(tn, j) ((tn) * NWI + (j))
#endif

// Local tiles. LDA: row stride of the transposed A block; 4 floats of padding keep vector reads
// aligned and turn the 4-way bank conflicts of the transposing stores into at most 2-way.
#define LDA (MWG + (VWM > 4 ? VWM : 4))
#define LDB NWG
#if DB
#define BUFFERS 2
#else
#define BUFFERS 1
#endif

// Global -> register loads of a K block: 4-vectors along K (A) or N (B) on the fast path, scalars
// with bounds checks at the edges. Each work-item holds A_LOADS (B_LOADS) values of width GVA (GVB).
#if !EDGE_M && !EDGE_K && (MWG * KWG) % (4 * THREADS) == 0
#define GVA 4
typedef CAT(ACC_T, 4) accGA;
#else
#define GVA 1
typedef acc_t accGA;
#endif
#if !EDGE_N && !EDGE_K && (NWG * KWG) % (4 * THREADS) == 0
#define GVB 4
typedef CAT(ACC_T, 4) accGB;
#else
#define GVB 1
typedef acc_t accGB;
#endif
#define A_LOADS (MWG * KWG / (GVA * THREADS))
#define B_LOADS (NWG * KWG / (GVB * THREADS))

#if SA
inline void load_a(accGA* ra, __global const elem_t* restrict A, int tid, int m0, int k0) {
#pragma unroll
  for (int r = 0; r < A_LOADS; ++r) {
    const int idx = tid + r * THREADS;
#if GVA == 4
    // Four consecutive k of one row; KWG / 4 neighbouring work-items cover a row's block.
    const int kv = idx % (KWG / 4), m = idx / (KWG / 4);
    ra[r] = GLOBAL_LOADV(4, A, (m0 + m) * K + k0 + kv * 4);
#else
    const int k = idx % KWG, m = idx / KWG;
    ra[r] = (m0 + m < M && k0 + k < K) ? ELEM_LOAD(A, (m0 + m) * K + k0 + k) : 0;
#endif
  }
}

inline void store_a(const accGA* ra, __local acc_t* as, int tid) {
#pragma unroll
  for (int r = 0; r < A_LOADS; ++r) {
    const int idx = tid + r * THREADS;
#if GVA == 4
    const int kv = idx % (KWG / 4), m = idx / (KWG / 4);
    __local acc_t* p = as + kv * 4 * LDA + m;
    p[0] = ra[r].s0;
    p[LDA] = ra[r].s1;
    p[2 * LDA] = ra[r].s2;
    p[3 * LDA] = ra[r].s3;
#else
    const int k = idx % KWG, m = idx / KWG;
    as[k * LDA + m] = ra[r];
#endif
  }
}
#endif

#if SB
inline void load_b(accGB* rb, __global const elem_t* restrict B, int tid, int n0, int k0) {
#pragma unroll
  for (int r = 0; r < B_LOADS; ++r) {
    const int idx = tid + r * THREADS;
#if GVB == 4
    const int nv = idx % (NWG / 4), k = idx / (NWG / 4);
    rb[r] = GLOBAL_LOADV(4, B, (k0 + k) * N + n0 + nv * 4);
#else
    const int n = idx % NWG, k = idx / NWG;
    rb[r] = (n0 + n < N && k0 + k < K) ? ELEM_LOAD(B, (k0 + k) * N + n0 + n) : 0;
#endif
  }
}

inline void store_b(const accGB* rb, __local acc_t* bs, int tid) {
#pragma unroll
  for (int r = 0; r < B_LOADS; ++r) {
    const int idx = tid + r * THREADS;
#if GVB == 4
    const int nv = idx % (NWG / 4), k = idx / (NWG / 4);
    *(__local CAT(ACC_T, 4)*)(bs + k * LDB + nv * 4) = rb[r];
#else
    const int n = idx % NWG, k = idx / NWG;
    bs[k * LDB + n] = rb[r];
#endif
  }
}
#endif

// One K block: the next block's global loads are issued, this block is multiplied from local
// memory (or global), then the next block is stored to local memory. `cur` is the buffer this
// block reads; the caller passes it as a constant, so every local address is a fixed offset.
inline void multiply_block(acc_t acc[MWI][NWI], __global const elem_t* restrict A, __global const elem_t* restrict B,
#if SA
                           __local acc_t* As, accGA* ra,
#endif
#if SB
                           __local acc_t* Bs, accGB* rb,
#endif
                           const int* a_row, int tid, int tm, int tn, int m0, int n0, int block, int last,
                           const int cur) {
  const int k0 = block * KWG;
  const bool more = block + 1 < last;  // the same for the whole work-group
  // The next block's loads are issued now and land in registers while this one is computed.
#if SA
  if (more) load_a(ra, A, tid, m0, k0 + KWG);
  __local const acc_t* as = As + cur * (KWG * LDA);
#endif
#if SB
  if (more) load_b(rb, B, tid, n0, k0 + KWG);
  __local const acc_t* bs = Bs + cur * (KWG * LDB);
#endif

  // Local tiles are zero-filled past K; direct global reads must stop there.
#if EDGE_K && !(SA && SB)
  const int k_end = min(KWG, K - k0);
#else
#define k_end KWG
#endif
#pragma unroll KWI
  for (int k = 0; k < k_end; ++k) {
    acc_t a[MWI], b[NWI];
#if SA
#pragma unroll
    for (int i = 0; i < MWI; i += VWM) {
      const accM v = *(__local const accM*)(as + k * LDA + ROW(tm, i));
      CAT(UNPACK, VWM)(a, i, v)
    }
#else
#pragma unroll
    for (int i = 0; i < MWI; ++i) a[i] = ELEM_LOAD(A, a_row[i] + k0 + k);
#endif
#if SB
#pragma unroll
    for (int j = 0; j < NWI; j += VWN) {
      const accN v = *(__local const accN*)(bs + k * LDB + COL(tn, j));
      CAT(UNPACK, VWN)(b, j, v)
    }
#elif !EDGE_N
#pragma unroll
    for (int j = 0; j < NWI; j += VWN) {
      const accN v = ELEM_LOADN(B, (k0 + k) * N + n0 + COL(tn, j));
      CAT(UNPACK, VWN)(b, j, v)
    }
#else
#pragma unroll
    for (int j = 0; j < NWI; ++j) b[j] = ELEM_LOAD(B, (k0 + k) * N + min(n0 + COL(tn, j), N - 1));
#endif
#pragma unroll
    for (int i = 0; i < MWI; ++i)
#pragma unroll
      for (int j = 0; j < NWI; ++j) acc[i][j] = MAD(a[i], b[j], acc[i][j]);
  }
#undef k_end

#if SA || SB
  if (more) {
#if !DB
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done reading the only buffer
#endif
#if SA
    store_a(ra, As + (cur ^ DB) * (KWG * LDA), tid);
#endif
#if SB
    store_b(rb, Bs + (cur ^ DB) * (KWG * LDB), tid);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif
}

#if SPLITK > 1
#include "split_k.cl"
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void optune_gemm(__global const elem_t* restrict A, __global const elem_t* restrict B,
                 __global out_t* restrict C
#if SPLITK > 1
                 , __global uint* restrict scratch
#endif
) {
  // tid: the linear id, which shares out the tile loads; (tm, tn): the work-item's place in the
  // grid of outputs.
  const int tid = get_local_id(1) * NDIMC + get_local_id(0);
#if WLAY
  const int lane = tid % 32, warp = tid / 32;
  const int tn = (warp % (NDIMC / 8)) * 8 + lane % 8, tm = (warp / (NDIMC / 8)) * 4 + lane / 8;
#else
  const int tn = get_local_id(0), tm = get_local_id(1);
#endif
  const int2 origin = tile_origin();  // tile_order.cl
  const int n0 = origin.x, m0 = origin.y;
#if SA
  __local acc_t As[BUFFERS * KWG * LDA] __attribute__((aligned(32)));
  accGA ra[A_LOADS];
#endif
#if SB
  __local acc_t Bs[BUFFERS * KWG * LDB] __attribute__((aligned(32)));
  accGB rb[B_LOADS];
#endif

  acc_t acc[MWI][NWI];
#pragma unroll
  for (int i = 0; i < MWI; ++i)
#pragma unroll
    for (int j = 0; j < NWI; ++j) acc[i][j] = 0;

  // Rows of A this work-item reads straight from global memory, clamped at the edge (unused with SA).
  int a_row[MWI];
#if !SA
#pragma unroll
  for (int i = 0; i < MWI; ++i) a_row[i] = min(m0 + ROW(tm, i), M - 1) * K;
#endif

  // This work-group's K blocks: [first, last), all of K without a split.
#if SPLITK > 1
  const int per_split = ((K + KWG - 1) / KWG + SPLITK - 1) / SPLITK;
  const int first = get_group_id(2) * per_split, last = min(first + per_split, (K + KWG - 1) / KWG);
#else
  const int first = 0, last = (K + KWG - 1) / KWG;
#endif

  // An idle split (no K blocks) skips to the reduction with a zero partial; the condition is the
  // whole work-group's, so no barrier is left waiting.
  if (first < last) {
    // The first K block goes straight to local memory.
#if SA
    load_a(ra, A, tid, m0, first * KWG);
    store_a(ra, As, tid);
#endif
#if SB
    load_b(rb, B, tid, n0, first * KWG);
    store_b(rb, Bs, tid);
#endif
#if SA || SB
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

#if SA && SB
#define BLOCK_ARGS As, ra, Bs, rb, a_row, tid, tm, tn, m0, n0
#elif SA
#define BLOCK_ARGS As, ra, a_row, tid, tm, tn, m0, n0
#elif SB
#define BLOCK_ARGS Bs, rb, a_row, tid, tm, tn, m0, n0
#else
#define BLOCK_ARGS a_row, tid, tm, tn, m0, n0
#endif
#if DB
    // Two blocks per iteration, each with its own buffer at a fixed offset.
    for (int block = first; block < last; block += 2) {
      multiply_block(acc, A, B, BLOCK_ARGS, block, last, 0);
      if (block + 1 < last) multiply_block(acc, A, B, BLOCK_ARGS, block + 1, last, 1);
    }
#else
    for (int block = first; block < last; ++block) multiply_block(acc, A, B, BLOCK_ARGS, block, last, 0);
#endif
  }

#if SPLITK > 1
  if (!sum_splits(&acc[0][0], MWI * NWI, MDIMC * NDIMC, tid, scratch)) return;
#endif

#pragma unroll
  for (int i = 0; i < MWI; ++i) {
    const int m = m0 + ROW(tm, i);
#if EDGE_M
    if (m >= M) continue;
#endif
#if !EDGE_N
#pragma unroll
    for (int j = 0; j < NWI; j += VWN)
      OUT_STOREN(C, m * N + n0 + COL(tn, j), CAT(PACK, VWN)(acc[i], j));
#else
#pragma unroll
    for (int j = 0; j < NWI; ++j) {
      const int n = n0 + COL(tn, j);
      if (n < N) OUT_STORE(C, m * N + n, acc[i][j]);
    }
#endif
  }
}
