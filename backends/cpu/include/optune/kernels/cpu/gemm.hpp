// The CPU GEMM kernel template: row-major C[M,N] = A[M,K] * B[K,N] in float32 (beta = 0: C is
// overwritten), GotoBLAS/BLIS structure. Three cache-blocking loops (jc over N, pc over K, ic
// over M, in the order the config picks) pack blocks of A and B into contiguous micro-panels;
// the macro-kernel walks NR-column micro-panels (jr) and MR-row micro-panels (ir) and calls a
// register-tiled micro-kernel that keeps the MR x NR accumulators in vector registers.
//
// The tuner's candidates and build-time consumers instantiate this same header:
//   optune::kernels::cpu::gemm<GemmConfig{...}>(M, N, K, A, lda, B, ldb, C, ldc);
// Compile with -O3 -march=<target> -fopenmp (without -fopenmp it runs on one thread).
//
// Edges: a bottom edge of few rows (tail_rows) and a right edge of whole vectors (tail_columns)
// run in narrower micro-kernels straight into C; other partial micro-tiles are computed into a
// small tile buffer and copied out. Packed panels are zero-padded to MR/NR, and unpacked operands
// are packed locally for edge tiles only, so no read goes past A or B.
//
// The blocking loops take their operands from "sources" (DenseA/DenseB: row-major matrices, as
// gemm() passes them; PrepackedA: A packed once by gemm_prepack_a, for constant weights). Other
// kernels reuse the loops and the micro-kernel with sources of their own: conv2d's GEMM path
// (conv2d_gemm.hpp) packs B panels straight from the image, without an im2col matrix.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "optune/kernels/cpu/aligned_buffer.hpp"
#include "optune/kernels/cpu/element_types.hpp"
#include "optune/kernels/cpu/gemm_config.hpp"
#include "optune/kernels/cpu/simd.hpp"

namespace optune::kernels::cpu {
namespace gemm_detail {

using Index = std::int64_t;

inline Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }

// The cache blocks and threads of a candidate compiled with GemmConfig::run_time_blocks, set before
// it runs (by its optune_set_knobs: each candidate's shared object has its own). Until they are
// set, blocks of 16 micro-tiles, a KC of 256 and one thread.
struct RunTimeBlocks {
  Index mc = 0, nc = 0, kc = 0;
  int threads = 0;
};
inline RunTimeBlocks run_time_blocks;

template <GemmConfig Cfg>
Index mc_block() {
  if constexpr (!Cfg.run_time_blocks) return Cfg.mc;
  return run_time_blocks.mc > 0 ? run_time_blocks.mc : Index{16} * Cfg.mr;
}
template <GemmConfig Cfg>
Index nc_block() {
  if constexpr (!Cfg.run_time_blocks) return Cfg.nc;
  return run_time_blocks.nc > 0 ? run_time_blocks.nc : Index{16} * Cfg.nr;
}
template <GemmConfig Cfg>
Index kc_block() {
  if constexpr (!Cfg.run_time_blocks) return Cfg.kc;
  return run_time_blocks.kc > 0 ? run_time_blocks.kc : 256;
}
template <GemmConfig Cfg>
int thread_count() {
  if constexpr (!Cfg.run_time_blocks) return Cfg.threads;
  return run_time_blocks.threads > 0 ? run_time_blocks.threads : 1;
}

using cpu::AlignedBuffer;

enum BufferRole { kPackedA, kPackedB, kSharedA, kSharedB, kEdge, kRoleCount };

inline float* thread_buffer(BufferRole role, std::size_t floats) {
  thread_local AlignedBuffer buffers[kRoleCount];
  return buffers[role].reserve(floats);
}

// The threads working on one shared set of blocks (ParallelLoop::kJr), or a team of one.
struct Team {
  int id = 0;
  int size = 1;
  void barrier() const {
#if defined(_OPENMP)
    if (size > 1) {
#pragma omp barrier
    }
#endif
  }
  // This member's share [begin, end) of `count` items, in contiguous chunks.
  void share(Index count, Index& begin, Index& end) const {
    begin = count * id / size;
    end = count * (id + 1) / size;
  }
};

// Per-thread scratch: packed blocks (possibly shared by the team) and the edge buffers.
struct Buffers {
  float* a = nullptr;       // MC x KC, MR-row micro-panels, each KC x MR (p-major)
  float* b = nullptr;       // KC x NC, NR-column micro-panels, each KC x NR (p-major)
  float* edge_a = nullptr;  // one MR x KC micro-panel, for unpacked A at the bottom edge
  float* edge_b = nullptr;  // one KC x NR micro-panel, for unpacked B at the right edge
  float* tile = nullptr;    // one MR x NR tile, for partial tiles of C
};

// ---- packing -------------------------------------------------------------------------------

// Rows [0, m) x depth [0, k) of A (leading dimension lda) into one MR-row panel, p-major,
// zero-padded to MR rows. (An AVX 8 x 8 transposing version measured slower on Zen3: both run
// near the L2 bandwidth that packing B, a plain copy, also reaches.) A of 16-bit floats
// (element_types.hpp) is widened to float32 as it is packed.
template <int MR, typename T = float>
void pack_a_panel(Index m, Index k, const T* __restrict a, Index lda, float* __restrict dst) {
  const T* rows[MR];
  for (int r = 0; r < MR; ++r) rows[r] = r < m ? a + r * lda : nullptr;
  for (Index p = 0; p < k; ++p) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) dst[p * MR + r] = r < m ? widen(rows[r][p]) : 0.0f;
  }
}

// Columns [0, n) x depth [0, k) of B into one NR-column panel, zero-padded to NR columns (and,
// for 16-bit floats, widened to float32).
template <int NR, typename T = float>
void pack_b_panel(Index k, Index n, const T* __restrict b, Index ldb, float* __restrict dst) {
  if constexpr (!std::is_same_v<T, float>) {
    for (Index p = 0; p < k; ++p) {
#pragma GCC unroll 16
      for (Index j = 0; j < n; ++j) dst[p * NR + j] = widen(b[p * ldb + j]);
      std::fill(dst + p * NR + n, dst + (p + 1) * NR, 0.0f);
    }
    return;
  }
  if (n == NR) {
    for (Index p = 0; p < k; ++p) __builtin_memcpy(dst + p * NR, b + p * ldb, NR * sizeof(float));
    return;
  }
  for (Index p = 0; p < k; ++p) {
    __builtin_memcpy(dst + p * NR, b + p * ldb, n * sizeof(float));
    std::fill(dst + p * NR + n, dst + (p + 1) * NR, 0.0f);
  }
}

// The panels [panel_begin, panel_end) of an m x k block of A.
template <int MR, typename T = float>
void pack_a_block(Index m, Index k, const T* a, Index lda, float* dst, Index panel_begin,
                  Index panel_end) {
  for (Index i = panel_begin; i < panel_end; ++i) {
    pack_a_panel<MR, T>(std::min<Index>(MR, m - i * MR), k, a + i * MR * lda, lda, dst + i * MR * k);
  }
}

template <int NR, typename T = float>
void pack_b_block(Index k, Index n, const T* b, Index ldb, float* dst, Index panel_begin,
                  Index panel_end) {
  for (Index j = panel_begin; j < panel_end; ++j) {
    pack_b_panel<NR, T>(k, std::min<Index>(NR, n - j * NR), b + j * NR, ldb, dst + j * NR * k);
  }
}

// ---- operand sources ----------------------------------------------------------------------

// A row-major A, packed block by block inside the loops (or read in place when !pack_a).
struct DenseA {
  static constexpr bool kPrepacked = false;
  const float* a;
  Index lda;
  DenseA rows_from(Index i) const { return {a + i * lda, lda}; }
  const float* at(Index i, Index p) const { return a + i * lda + p; }
};

// A packed once (gemm_prepack_a): for each KC block pc, the MR-row micro-panels of every row
// ([padded_rows / MR][kc][MR]), so block (ic, pc) starts at pc * padded_rows + ic * kc. Weights
// of an inference are constants: packing them once takes A's packing out of every call.
struct PrepackedA {
  static constexpr bool kPrepacked = true;
  const float* packed;
  Index padded_rows;  // M rounded up to MR
  Index row0 = 0;     // first row of this (thread's) slice, a multiple of MR
  PrepackedA rows_from(Index i) const { return {packed, padded_rows, row0 + i}; }
  const float* block(Index ic, Index pc, Index kc) const {
    return packed + pc * padded_rows + (row0 + ic) * kc;
  }
};

// A row-major B, packed block by block (or read in place when !pack_b).
struct DenseB {
  static constexpr bool kInPlace = true;  // at() is valid: pack_b = false is possible
  const float* b;
  Index ldb;
  DenseB columns_from(Index j) const { return {b + j, ldb}; }
  const float* at(Index p, Index j) const { return b + p * ldb + j; }
  // The NR-column panels [panel_begin, panel_end) of block B[pc:pc+kc, jc:jc+nc].
  template <int NR>
  void pack(Index pc, Index kc, Index jc, Index nc, Index panel_begin, Index panel_end, float* dst) const {
    pack_b_block<NR>(kc, nc, at(pc, jc), ldb, dst, panel_begin, panel_end);
  }
};

// ---- micro-kernel --------------------------------------------------------------------------

// What a micro-kernel does for B beside its FMAs, when macro_kernel packs B as it goes.
struct BSideWork {
  float* copy = nullptr;         // CopyB: each row of the unpacked B panel read is stored here, packed
  const float* fetch = nullptr;  // Fetch: rows of B in place (the next panel's) to bring into L2,
  Index fetch_ld = 0;            // spread over the K loop, fetch_rows of them
  Index fetch_rows = 0;
};

// Brings the cache lines of `floats` floats from `row` on towards the core (prefetch locality 0-3):
// one prefetch per 64-byte line, the last included, however the row is aligned.
template <int Locality>
[[gnu::always_inline]] inline void prefetch_row(const float* row, int floats) {
  for (int o = 0; o < floats; o += 16) __builtin_prefetch(row + o, 0, Locality);
  __builtin_prefetch(row + floats - 1, 0, Locality);
}

// Independent accumulators a core needs in flight to keep its FMA units busy: FMA latency (4
// cycles on current x86 and Arm cores) times FMA issue per cycle (2).
inline constexpr int kAccumulatorsInFlight = 8;

// Rows of B ahead that a micro-tile copying B in place fetches into L1 (8-16 measured alike, 4 and
// 32 less well).
inline constexpr Index kCopyAhead = 16;

// Accumulator sets of an MR x NV-vector micro-kernel. One where the tile has enough accumulators.
// A narrow edge kernel (1 x 3 vectors: 3 accumulators) keeps 2 or 4 sets, enough for 8 in all, each
// set taking every Chains-th step of K, so that successive steps' FMAs do not wait on each other;
// within the vector registers. Measured per kernel on one core, B packed in L1, A in place (AVX2
// code: 1 x 24 52 -> 110 GFLOP/s, 4 x 8 68 -> 106; A packed, AVX-512 code: 1 x 32 65 -> 129, 4 x 16
// 123 -> 162). Three sets, though as fast alone for 4 x 8, made a whole 512^3 GEMM whose right
// edge took that kernel 8% slower (AVX2 code; not understood), and two did not.
template <int MR, int NV>
constexpr int accumulator_chains() {
  int chains = 1;
  while (chains < 4 && chains * MR * NV < kAccumulatorsInFlight) chains *= 2;
  while (chains > 1 && chains * MR * NV + NV + 1 > kVectorRegisters) chains /= 2;
  return chains;
}

// C[0:MR, 0:NR] (=|+=) A-panel * B-panel over depth kc. A packed: a[p*AStride + r] (AStride > MR:
// the first MR rows of a wider packed panel); unpacked: a[r*lda + p]. B packed: b[p*BStride + j]
// (BStride > NR: the first NR columns of a wider packed panel); unpacked: b[p*ldb + j]. CopyB and
// Fetch: see BSideWork.
template <int MR, int NR, int Lanes, int Unroll, bool PackedA, bool PackedB, bool CopyB = false, bool Fetch = false,
          int AStride = MR, int BStride = NR>
[[gnu::hot, gnu::noinline]] void micro_kernel(Index kc, const float* __restrict a, Index lda,
                                              const float* __restrict b, Index ldb,
                                              float* __restrict c, Index ldc, bool accumulate,
                                              BSideWork side = {}) {
  static_assert(!(CopyB && PackedB), "only an unpacked B panel is copied");
  using S = Simd<Lanes>;
  using V = typename S::Vector;
  constexpr int NV = NR / Lanes;
  constexpr int Chains = accumulator_chains<MR, NV>();
  V acc[Chains][MR][NV];
#pragma GCC unroll 4
  for (int h = 0; h < Chains; ++h) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[h][r][v] = V{};
    }
  }
  // The C tile is read and written only after the K loop: start fetching its lines now.
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r) {
    __builtin_prefetch(c + r * ldc, 1, 3);
    __builtin_prefetch(c + r * ldc + NR - 1, 1, 3);
  }
  const Index a_step = PackedA ? AStride : 1;
  const Index b_step = PackedB ? BStride : ldb;

  // One row fetched every fetch_every steps: prefetches spread among the FMAs keep memory busy
  // without filling the line buffers that a burst of them would stall on.
  const Index fetch_every = side.fetch_rows > 0 ? std::max<Index>(1, kc / side.fetch_rows) : kc + 1;
  Index fetch_countdown = fetch_every;
  auto step = [&](V (&sum)[MR][NV], const float* ap, const float* bp, float* copy) __attribute__((always_inline)) {
    if constexpr (Fetch) {
      if (--fetch_countdown == 0 && side.fetch_rows > 0) {
        prefetch_row<2>(side.fetch, NR);
        side.fetch += side.fetch_ld;
        --side.fetch_rows;
        fetch_countdown = fetch_every;
      }
    }
    // The row copied kCopyAhead steps from now, from L2 (where Fetch put it) into L1: the copying
    // micro-tile stalled on these loads (49 x 512 x 4608, AVX2: 3% faster in all). Past the
    // block's last row it fetches lines nobody reads; a prefetch never faults.
    if constexpr (CopyB) prefetch_row<3>(bp + kCopyAhead * ldb, NR);
    V bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      bv[v] = S::load(bp + v * Lanes);
      if constexpr (CopyB) S::store(copy + v * Lanes, bv[v]);
      S::keep_in_register(bv[v]);
    }
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      const V av = S::broadcast(PackedA ? ap + r : ap + r * lda);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) sum[r][v] = S::fma(av, bv[v], sum[r][v]);
    }
  };

  const float* ap = a;
  const float* bp = b;
  float* copy = side.copy;
  constexpr int Group = std::max(Unroll, Chains);  // steps per unrolled iteration
  Index p = 0;
  for (; p + Group <= kc; p += Group) {
#pragma GCC unroll 8
    for (int u = 0; u < Group; ++u) {
      step(acc[u % Chains], ap + u * a_step, bp + u * b_step, CopyB ? copy + u * NR : nullptr);
    }
    ap += Group * a_step;
    bp += Group * b_step;
    if constexpr (CopyB) copy += Group * NR;
  }
  for (; p < kc; ++p) {
    step(acc[0], ap, bp, copy);
    ap += a_step;
    bp += b_step;
    if constexpr (CopyB) copy += NR;
  }

#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      V total = acc[0][r][v];
#pragma GCC unroll 4
      for (int h = 1; h < Chains; ++h) total += acc[h][r][v];
      float* cp = c + r * ldc + v * Lanes;
      S::store(cp, accumulate ? S::load(cp) + total : total);
    }
  }
}

// micro_kernel with A packed or in place, as the caller found it.
template <int MR, int NR, int Lanes, int Unroll, bool PackedB, bool CopyB = false, bool Fetch = false>
void micro_kernel_for_a(bool packed_a, Index kc, const float* a, Index lda, const float* b, Index ldb, float* c,
                        Index ldc, bool accumulate, const BSideWork& side = {}) {
  if (packed_a) {
    micro_kernel<MR, NR, Lanes, Unroll, true, PackedB, CopyB, Fetch>(kc, a, lda, b, ldb, c, ldc, accumulate, side);
  } else {
    micro_kernel<MR, NR, Lanes, Unroll, false, PackedB, CopyB, Fetch>(kc, a, lda, b, ldb, c, ldc, accumulate, side);
  }
}

// The m < MR rows of a bottom-edge micro-tile, full width, straight into C: micro-kernels of 8, 4, 2
// and 1 rows (those under MR) cover them, so a tail of one row costs a one-row kernel instead of a
// whole tile on zero-padded rows (49 rows in tiles of 6 leave one; 7 rows, 6 + 1). `a`: the rows in
// place, or their packed panel of MR rows.
template <int MR, int NR, int Lanes, int Unroll, bool PackedB, int Rows = 8>
void tail_rows(Index m, bool packed_a, Index kc, const float* a, Index lda, const float* b, Index ldb, float* c,
               Index ldc, bool accumulate) {
  if constexpr (Rows < MR) {
    if (m >= Rows) {
      if (packed_a) {
        micro_kernel<Rows, NR, Lanes, Unroll, true, PackedB, false, false, MR>(kc, a, lda, b, ldb, c, ldc, accumulate);
      } else {
        micro_kernel<Rows, NR, Lanes, Unroll, false, PackedB>(kc, a, lda, b, ldb, c, ldc, accumulate);
      }
      a += packed_a ? Rows : Rows * lda;
      c += Rows * ldc;
      m -= Rows;
    }
  }
  if constexpr (Rows > 1) tail_rows<MR, NR, Lanes, Unroll, PackedB, Rows / 2>(m, packed_a, kc, a, lda, b, ldb, c, ldc, accumulate);
}

// The n < NR columns of a right-edge micro-tile of MR whole rows, when n is whole vectors, straight
// into C: a kernel n / Lanes vectors wide reads the first n columns of the packed, zero-padded
// panel, instead of a whole-width tile computed into the tile buffer and copied out (a thread's 256
// columns in panels of 24 leave 16).
template <int MR, int NR, int Lanes, int Unroll, bool PackedA, int Vectors = NR / Lanes - 1>
bool tail_columns(Index n, Index kc, const float* a, Index lda, const float* b, float* c, Index ldc, bool accumulate) {
  if constexpr (Vectors >= 1) {
    if (n == Vectors * Lanes) {
      micro_kernel<MR, Vectors * Lanes, Lanes, Unroll, PackedA, true, false, false, MR, NR>(kc, a, lda, b, 0, c, ldc,
                                                                                          accumulate);
      return true;
    }
    return tail_columns<MR, NR, Lanes, Unroll, PackedA, Vectors - 1>(n, kc, a, lda, b, c, ldc, accumulate);
  }
  return false;
}

// ---- macro-kernel --------------------------------------------------------------------------

// One block: C[0:mc, 0:nc] (=|+=) A[0:mc, 0:kc] * B[0:kc, 0:nc], for the NR-column micro-panels
// [jr_begin, jr_end). `a` and `b` point at packed blocks or, when unpacked, at the operands in
// place (A + ic*lda + pc, B + pc*ldb + jc). With PackB and `pack_from` (B's block in place,
// leading dimension pack_ld), the packed block buffers.b is not filled yet: each panel's first
// micro-tile reads B in place and packs it as it goes, the others read the packed panel; if no
// other block of A reads this block of B (b_block_read_once), every panel goes into the first
// panel's space.
template <GemmConfig Cfg, bool PackA, bool PackB>
void macro_kernel(Index mc, Index nc, Index kc, const float* a, Index lda, const float* b,
                  Index ldb, float* c, Index ldc, bool accumulate, Index jr_begin, Index jr_end,
                  const Buffers& buffers, const float* pack_from = nullptr, Index pack_ld = 0,
                  bool b_block_read_once = false) {
  constexpr int MR = Cfg.mr, NR = Cfg.nr, L = Cfg.lanes, U = Cfg.unroll;
  const bool packing_as_we_go = PackB && pack_from != nullptr;
  const Index panel_step = packing_as_we_go && b_block_read_once ? 0 : NR * kc;
  for (Index jp = jr_begin; jp < jr_end; ++jp) {
    const Index j = jp * NR;
    const Index n = std::min<Index>(NR, nc - j);
    bool packed_b = PackB;
    const float* b_panel = PackB ? b + jp * panel_step : b + j;
    if (!PackB && n < NR) {  // never read past the right edge of B
      pack_b_panel<NR>(kc, n, b_panel, ldb, buffers.edge_b);
      b_panel = buffers.edge_b;
      packed_b = true;
    }
    bool copy_b = packing_as_we_go;
    if (copy_b && n < NR) {  // a partial panel is zero-padded: packed the plain way
      pack_b_panel<NR>(kc, n, pack_from + j, pack_ld, buffers.b + jp * panel_step);
      copy_b = false;
    }
    // While this panel's packed micro-tiles compute, they fetch the next panel's rows of B into
    // L2, a share each, so that its copying micro-tile finds them there instead of in memory
    // (49 x 512 x 4608, AVX2: 7-10% faster).
    const float* next_panel = packing_as_we_go && jp + 1 < jr_end ? pack_from + j + NR : nullptr;
    const Index fetch_share = mc > MR ? ceil_div(kc, ceil_div(mc, MR) - 1) : 0;
    Index fetched = 0;
    for (Index i = 0; i < mc; i += MR) {
      const Index m = std::min<Index>(MR, mc - i);
      bool packed_a = PackA;
      const float* a_panel = PackA ? a + i * kc : a + i * lda;
      // At most half a tile of rows left, or rows one narrower kernel covers (4 in tiles of 6):
      // narrower kernels. Else one whole tile on padded rows, since each narrower kernel is
      // another pass over B (7 rows as 4 + 2 + 1 in tiles of 8 ran 9% slower than one tile of 8;
      // 1 row in tiles of 6, 1.5x faster than a tile of 6).
      const bool one_narrower_kernel = (m & (m - 1)) == 0;
      if (m < MR && (2 * m <= MR || one_narrower_kernel) && n == NR && !copy_b) {
        tail_rows<MR, NR, L, U, PackB>(m, PackA, kc, a_panel, lda, b_panel, ldb, c + i * ldc + j, ldc, accumulate);
        continue;
      }
      if (m == MR && n < NR &&
          tail_columns<MR, NR, L, U, PackA>(n, kc, a_panel, lda, b_panel, c + i * ldc + j, ldc, accumulate)) {
        continue;  // B's partial panel is always packed here: by PackB, or above into edge_b
      }
      if (!PackA && m < MR) {  // never read past the bottom edge of A
        pack_a_panel<MR>(m, kc, a_panel, lda, buffers.edge_a);
        a_panel = buffers.edge_a;
        packed_a = true;
      }
      const bool full = m == MR && n == NR;
      float* out = full ? c + i * ldc + j : buffers.tile;
      const Index ldo = full ? ldc : NR;
      const bool acc = full && accumulate;
      if (copy_b) {
        const BSideWork side{.copy = buffers.b + jp * panel_step};
        micro_kernel_for_a<MR, NR, L, U, false, true>(packed_a, kc, a_panel, lda, pack_from + j, pack_ld, out, ldo,
                                                      acc, side);
        copy_b = false;
      } else if (next_panel != nullptr && fetched < kc) {
        const BSideWork side{.fetch = next_panel + fetched * pack_ld,
                             .fetch_ld = pack_ld,
                             .fetch_rows = std::min(fetch_share, kc - fetched)};
        fetched += side.fetch_rows;
        micro_kernel_for_a<MR, NR, L, U, true, false, true>(packed_a, kc, a_panel, lda, b_panel, ldb, out, ldo, acc,
                                                            side);
      } else if (packed_b) {
        micro_kernel_for_a<MR, NR, L, U, true>(packed_a, kc, a_panel, lda, b_panel, ldb, out, ldo, acc);
      } else {
        micro_kernel_for_a<MR, NR, L, U, false>(packed_a, kc, a_panel, lda, b_panel, ldb, out, ldo, acc);
      }
      if (full) continue;
      for (Index r = 0; r < m; ++r) {
        float* cr = c + (i + r) * ldc + j;
        const float* tr = buffers.tile + r * NR;
        for (Index q = 0; q < n; ++q) cr[q] = accumulate ? cr[q] + tr[q] : tr[q];
      }
    }
  }
}

// ---- blocking loops ------------------------------------------------------------------------

// The whole (sub)problem with the config's loop order, by one thread or by a team sharing the
// packed blocks (then packing and the jr loop are split among the team).
template <GemmConfig Cfg, class ASource, class BSource>
void blocked_gemm(Index M, Index N, Index K, const ASource& A, const BSource& B, float* C, Index ldc,
                  const Buffers& buffers, const Team& team) {
  constexpr int MR = Cfg.mr, NR = Cfg.nr;
  constexpr bool kPackA = Cfg.pack_a || ASource::kPrepacked;
  static_assert(Cfg.pack_b || BSource::kInPlace, "this B source must be packed (pack_b = true)");
  const Index MC = mc_block<Cfg>(), NC = nc_block<Cfg>(), KC = kc_block<Cfg>();

  // A thread that packs B for itself alone packs each panel while computing its first micro-tile
  // (macro_kernel's pack_from): the copy's strided reads of B overlap FMAs instead of stalling a
  // packing loop (49 x 512 x 4608, AVX2: packing took a fifth of the time, 4% faster packed this
  // way). A team shares the block, so it packs it first, between barriers.
  const bool pack_as_we_go = Cfg.pack_b && BSource::kInPlace && team.size == 1;
  // A B block that only one ic block reads (ic is the outer loop, or one MC block covers M) is
  // packed into one panel's space, reused panel after panel, so the copies stay in L1.
  const bool b_block_read_once = Cfg.loop_order == LoopOrder::kIcPcJc || M <= MC;
  bool b_block_unpacked = false;
  auto pack_b = [&](Index jc, Index pc, Index nc, Index kc) {
    if (pack_as_we_go) {
      b_block_unpacked = true;
      return;
    }
    if constexpr (Cfg.pack_b) {
      Index begin = 0, end = 0;
      team.share(ceil_div(nc, NR), begin, end);
      team.barrier();  // nobody still reads the previous block
      B.template pack<NR>(pc, kc, jc, nc, begin, end, buffers.b);
      team.barrier();
    }
  };
  auto pack_a = [&](Index ic, Index pc, Index mc, Index kc) {
    if constexpr (Cfg.pack_a && !ASource::kPrepacked) {
      Index begin = 0, end = 0;
      team.share(ceil_div(mc, MR), begin, end);
      team.barrier();
      pack_a_block<MR>(mc, kc, A.at(ic, pc), A.lda, buffers.a, begin, end);
      team.barrier();
    }
  };
  auto compute = [&](Index ic, Index jc, Index pc, Index mc, Index nc, Index kc) {
    Index begin = 0, end = 0;
    team.share(ceil_div(nc, NR), begin, end);
    const float* a = nullptr;
    Index lda = 0, ldb = 0;
    if constexpr (ASource::kPrepacked) {
      a = A.block(ic, pc, kc);
    } else {
      a = Cfg.pack_a ? buffers.a : A.at(ic, pc);
      lda = A.lda;
    }
    const float* b = buffers.b;
    if constexpr (!Cfg.pack_b) {
      b = B.at(pc, jc);
      ldb = B.ldb;
    }
    const float* pack_from = nullptr;
    Index pack_ld = 0;
    if constexpr (BSource::kInPlace) {
      if (b_block_unpacked) pack_from = B.at(pc, jc), pack_ld = B.ldb;
      b_block_unpacked = false;
    }
    macro_kernel<Cfg, kPackA, Cfg.pack_b>(mc, nc, kc, a, lda, b, ldb, C + ic * ldc + jc, ldc, pc > 0,
                                          begin, end, buffers, pack_from, pack_ld, b_block_read_once);
  };

  if constexpr (Cfg.loop_order == LoopOrder::kJcPcIc) {
    for (Index jc = 0; jc < N; jc += NC) {
      const Index nc = std::min(NC, N - jc);
      for (Index pc = 0; pc < K; pc += KC) {
        const Index kc = std::min(KC, K - pc);
        pack_b(jc, pc, nc, kc);
        for (Index ic = 0; ic < M; ic += MC) {
          const Index mc = std::min(MC, M - ic);
          pack_a(ic, pc, mc, kc);
          compute(ic, jc, pc, mc, nc, kc);
        }
      }
    }
  } else if constexpr (Cfg.loop_order == LoopOrder::kPcJcIc) {
    for (Index pc = 0; pc < K; pc += KC) {
      const Index kc = std::min(KC, K - pc);
      for (Index jc = 0; jc < N; jc += NC) {
        const Index nc = std::min(NC, N - jc);
        pack_b(jc, pc, nc, kc);
        for (Index ic = 0; ic < M; ic += MC) {
          const Index mc = std::min(MC, M - ic);
          pack_a(ic, pc, mc, kc);
          compute(ic, jc, pc, mc, nc, kc);
        }
      }
    }
  } else {
    for (Index ic = 0; ic < M; ic += MC) {
      const Index mc = std::min(MC, M - ic);
      for (Index pc = 0; pc < K; pc += KC) {
        const Index kc = std::min(KC, K - pc);
        pack_a(ic, pc, mc, kc);
        for (Index jc = 0; jc < N; jc += NC) {
          const Index nc = std::min(NC, N - jc);
          pack_b(jc, pc, nc, kc);
          compute(ic, jc, pc, mc, nc, kc);
        }
      }
    }
  }
}

// Scratch sizes for an M x N x K problem: blocks no larger than the problem needs.
template <GemmConfig Cfg>
struct BufferSizes {
  std::size_t a, b, edge;
  BufferSizes(Index M, Index N, Index K) {
    const Index mc = std::min<Index>(mc_block<Cfg>(), ceil_div(M, Cfg.mr) * Cfg.mr);
    const Index nc = std::min<Index>(nc_block<Cfg>(), ceil_div(N, Cfg.nr) * Cfg.nr);
    const Index kc = std::min<Index>(kc_block<Cfg>(), K);
    a = Cfg.pack_a ? static_cast<std::size_t>(mc * kc) : 0;
    b = Cfg.pack_b ? static_cast<std::size_t>(nc * kc) : 0;
    edge = static_cast<std::size_t>((Cfg.mr + Cfg.nr) * kc + Cfg.mr * Cfg.nr);
  }
};

template <GemmConfig Cfg>
void private_buffers(const BufferSizes<Cfg>& sizes, Buffers& buffers, Index K) {
  const Index kc = std::min<Index>(kc_block<Cfg>(), K);
  buffers.edge_a = thread_buffer(kEdge, sizes.edge);
  buffers.edge_b = buffers.edge_a + Cfg.mr * kc;
  buffers.tile = buffers.edge_b + Cfg.nr * kc;
}

// One thread's share [begin, end) of [0, extent), cut at multiples of `unit`: a micro-tile's rows
// for M; a vector for N, where a right-edge panel of whole vectors costs little (tail_columns): 512
// columns in panels of 24 split 264 + 248 at a panel, 256 + 256 at a vector (49 x 512 x 4608, AVX2
// code: 2% faster).
inline void slice(Index extent, Index unit, int id, int size, Index& begin, Index& end) {
  const Index panels = ceil_div(extent, unit);
  begin = std::min(extent, panels * id / size * unit);
  end = std::min(extent, panels * (id + 1) / size * unit);
}

// One thread's own slice, with its own buffers.
template <GemmConfig Cfg, class ASource, class BSource>
void run_private(Index m, Index n, Index K, const ASource& A, const BSource& B, float* C, Index ldc) {
  Buffers buffers;
  const BufferSizes<Cfg> sizes(m, n, K);
  private_buffers<Cfg>(sizes, buffers, K);
  if (sizes.a && !ASource::kPrepacked) buffers.a = thread_buffer(kPackedA, sizes.a);
  if (sizes.b) buffers.b = thread_buffer(kPackedB, sizes.b);
  blocked_gemm<Cfg>(m, n, K, A, B, C, ldc, buffers, Team{});
}

template <GemmConfig Cfg, class ASource, class BSource>
void run_thread(int id, int size, Index M, Index N, Index K, const ASource& A, const BSource& B, float* C,
                Index ldc, float* shared_a, float* shared_b) {
  Buffers buffers;
  if constexpr (Cfg.parallel == ParallelLoop::kJr) {
    const BufferSizes<Cfg> sizes(M, N, K);
    private_buffers<Cfg>(sizes, buffers, K);
    buffers.a = shared_a;
    buffers.b = shared_b;
    blocked_gemm<Cfg>(M, N, K, A, B, C, ldc, buffers, Team{id, size});
    return;
  }
  Index begin = 0, end = 0;
  if constexpr (Cfg.parallel == ParallelLoop::kJc) {
    slice(N, Cfg.lanes, id, size, begin, end);
    if (M <= 0 || end <= begin) return;
    run_private<Cfg>(M, end - begin, K, A, B.columns_from(begin), C + begin, ldc);
  } else {
    slice(M, Cfg.mr, id, size, begin, end);
    if (end <= begin || N <= 0) return;
    run_private<Cfg>(end - begin, N, K, A.rows_from(begin), B, C + begin * ldc, ldc);
  }
}

// The whole M x N x K problem on one thread, with operands of any source.
template <GemmConfig Cfg, class ASource, class BSource>
void run_operands(std::int64_t M, std::int64_t N, std::int64_t K, const ASource& A, const BSource& B, float* C,
                  std::int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (Index i = 0; i < M; ++i) std::fill_n(C + i * ldc, N, 0.0f);
    return;
  }
  float* shared_a = nullptr;
  float* shared_b = nullptr;
  if constexpr (Cfg.parallel == ParallelLoop::kJr) {
    const BufferSizes<Cfg> sizes(M, N, K);
    if (sizes.a) shared_a = thread_buffer(kSharedA, sizes.a);
    if (sizes.b) shared_b = thread_buffer(kSharedB, sizes.b);
  }
  if (const int threads = thread_count<Cfg>(); threads == 1) {
    run_thread<Cfg>(0, 1, M, N, K, A, B, C, ldc, shared_a, shared_b);
  } else {
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
    run_thread<Cfg>(omp_get_thread_num(), omp_get_num_threads(), M, N, K, A, B, C, ldc, shared_a, shared_b);
#else
    run_thread<Cfg>(0, 1, M, N, K, A, B, C, ldc, shared_a, shared_b);
#endif
  }
}

}  // namespace gemm_detail

// C[M,N] = A[M,K] * B[K,N], row-major with leading dimensions lda, ldb, ldc (in elements).
// Any M, N, K >= 0; K == 0 gives C = 0.
template <GemmConfig Cfg>
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, const float* A, std::int64_t lda,
          const float* B, std::int64_t ldb, float* C, std::int64_t ldc) {
  static_assert(gemm_config_error(Cfg) == nullptr, "invalid GemmConfig (see gemm_config_error)");
  static_assert(is_supported_lanes(Cfg.lanes),
                "GemmConfig::lanes needs a wider SIMD ISA than the compile flags enable");
  gemm_detail::run_operands<Cfg>(M, N, K, gemm_detail::DenseA{A, lda}, gemm_detail::DenseB{B, ldb}, C, ldc);
}

// Floats of A (M x K) packed by gemm_prepack_a<Cfg>.
template <GemmConfig Cfg>
std::size_t gemm_prepacked_a_size(std::int64_t M, std::int64_t K) {
  return static_cast<std::size_t>(gemm_detail::ceil_div(M, Cfg.mr) * Cfg.mr * K);
}

// Packs row-major A (M x K, leading dimension lda) once, for gemm_detail::PrepackedA: per KC
// block of depth, the MR-row micro-panels of all rows, zero-padded to MR (16-bit floats widened).
template <GemmConfig Cfg, typename T = float>
void gemm_prepack_a(std::int64_t M, std::int64_t K, const T* A, std::int64_t lda, float* packed) {
  using gemm_detail::Index;
  const Index padded_rows = gemm_detail::ceil_div(M, Cfg.mr) * Cfg.mr;
  for (Index pc = 0; pc < K; pc += gemm_detail::kc_block<Cfg>()) {
    const Index kc = std::min<Index>(gemm_detail::kc_block<Cfg>(), K - pc);
    gemm_detail::pack_a_block<Cfg.mr, T>(M, kc, A + pc, lda, packed + pc * padded_rows, 0, padded_rows / Cfg.mr);
  }
}

}  // namespace optune::kernels::cpu
