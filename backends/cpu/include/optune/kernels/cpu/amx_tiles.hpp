// AMX's tiles as the dot-product GEMMs (gemm_bf16.hpp, gemm_int8.hpp) use them: the process's
// permission, one tile configuration (eight tiles of 16 rows x 64 bytes), and a micro-tile of
// MT x NT 16 x 16 sums over slabs of A (16 rows x 64 bytes of K) and of a packed B panel (rows of
// 64 bytes: 16 columns' pairs of bf16 or quads of bytes), the product instruction given by the
// caller. Defined where the target has AMX (__AMX_TILE__, on Linux): OPTUNE_AMX_TILES.
#pragma once

namespace optune::kernels::cpu::amx {

// Tiles at most a micro-tile of mr x nr takes: its sums, mr / 16 of A and nr / 16 of B (a
// config's rule on every target).
constexpr int tiles_of(int mr, int nr) { return (mr / 16) * (nr / 16) + mr / 16 + nr / 16; }

// What is wrong with a GEMM's AMX micro-tile of mr x nr and its cache block's depth kc, whose
// step of depth is `depth_step` (a tile row's 64 bytes: 32 bf16, 64 bytes); nullptr where nothing.
constexpr const char* micro_tile_error(int mr, int nr, long long kc, int depth_step) {
  if (mr != 16 && mr != 32) return "amx: mr must be 16 or 32";
  if (nr != 16 && nr != 32 && nr != 48) return "amx: nr must be 16, 32 or 48";
  if (tiles_of(mr, nr) > 8) return "amx: mr x nr takes more than AMX's 8 tiles";
  if (kc % depth_step != 0) return depth_step == 32 ? "amx: kc must be a multiple of 32" : "amx: kc must be a multiple of 64";
  return nullptr;
}

}  // namespace optune::kernels::cpu::amx

#if defined(__AMX_TILE__) && defined(__AVX512F__) && defined(__linux__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "optune/kernels/cpu/aligned_buffer.hpp"
#define OPTUNE_AMX_TILES 1

namespace optune::kernels::cpu::amx {

using Index = std::int64_t;

// Linux gives a process AMX's tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM for
// XTILEDATA); asked once per process.
inline bool permitted() {
  static const bool allowed = [] {
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return allowed;
}

// The tile configuration ldtilecfg reads and sttilecfg writes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 0, start_row = 0, reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

// Palette 1, all eight tiles 16 rows of 64 bytes: the A, B and sum tiles alike.
inline TileConfig kernels_config() {
  TileConfig config;
  config.palette = 1;
  for (int t = 0; t < 8; ++t) config.bytes_per_row[t] = 64, config.rows[t] = 16;
  return config;
}

// The calling thread's tiles configured as kernels_config(), unless they already are (an earlier
// call set it; another library's kernels may have set another): ldtilecfg zeroes every tile and
// costs more than reading the configuration back, which was 3% of a small convolution's time.
inline void configure() {
  static const TileConfig wanted = kernels_config();
  TileConfig current;
  _tile_storeconfig(&current);
  if (std::memcmp(&current, &wanted, sizeof current) != 0) _tile_loadconfig(&wanted);
}

// Tile registers are immediates: sums (mi, ni) in tile mi * NT + ni (0..3), A's 16-row slabs in
// 4 and 5, B's 16-column slabs in 8 - NT and up. GCC's intrinsics paste the number into their
// assembly, so each takes a literal, chosen at compile time.
#define OPTUNE_AMX_ON_TILE(T, STATEMENT)                                                                       \
  if constexpr (T == 0) STATEMENT(0) else if constexpr (T == 1) STATEMENT(1) else if constexpr (T == 2)          \
      STATEMENT(2) else if constexpr (T == 3) STATEMENT(3) else if constexpr (T == 4) STATEMENT(4)               \
          else if constexpr (T == 5) STATEMENT(5) else if constexpr (T == 6) STATEMENT(6) else STATEMENT(7)
template <int T>
inline void load(const void* at, Index stride) {
#define OPTUNE_AMX_LOAD(n) { _tile_loadd(n, at, stride); }
  OPTUNE_AMX_ON_TILE(T, OPTUNE_AMX_LOAD)
#undef OPTUNE_AMX_LOAD
}
template <int T>
inline void store(void* at, Index stride) {
#define OPTUNE_AMX_STORE(n) { _tile_stored(n, at, stride); }
  OPTUNE_AMX_ON_TILE(T, OPTUNE_AMX_STORE)
#undef OPTUNE_AMX_STORE
}
template <int T>
inline void zero() {
#define OPTUNE_AMX_ZERO(n) { _tile_zero(n); }
  OPTUNE_AMX_ON_TILE(T, OPTUNE_AMX_ZERO)
#undef OPTUNE_AMX_ZERO
}
#undef OPTUNE_AMX_ON_TILE

// The (sum, A, B) tile triples micro_tile's shapes use, for a product macro DOT(sum, a, b).
#define OPTUNE_AMX_EACH_TRIPLE(DOT)                                                                        \
  DOT(0, 4, 7) DOT(0, 4, 6) DOT(1, 4, 7) DOT(0, 4, 5) DOT(1, 4, 6) DOT(2, 4, 7) DOT(1, 5, 7) DOT(2, 5, 6) \
  DOT(3, 5, 7)
constexpr bool is_used_triple(int sum, int a, int b) {
#define OPTUNE_AMX_MATCH(s, x, y) || (sum == s && a == x && b == y)
  return false OPTUNE_AMX_EACH_TRIPLE(OPTUNE_AMX_MATCH);
#undef OPTUNE_AMX_MATCH
}

// The MT x NT sums of A's rows (16 a slab, a_stride bytes apart, 64 bytes of K a step) times the
// packed B panel (rows b_stride bytes apart, 16 rows a step, slab ni at byte 64 ni) over `steps`
// steps: `start(tile)` begins each sum (zero or load it), `Dot::template run<S, A, B>()` is the
// product instruction, and `finish(tile)` takes each sum (store it).
template <int MT, int NT, typename Dot, typename Start, typename Finish>
void micro_tile(Index steps, const std::uint8_t* a, Index a_stride, const std::uint8_t* b, Index b_stride,
                Start&& start, Finish&& finish) {
  static_assert(tiles_of(16 * MT, 16 * NT) <= 8, "more than AMX's 8 tiles");
  constexpr int kB = 8 - NT;
  auto each_sum = [](auto&& f) {
    [&]<int... T>(std::integer_sequence<int, T...>) { (f.template operator()<T / NT, T % NT>(), ...); }(
        std::make_integer_sequence<int, MT * NT>{});
  };
  each_sum([&]<int MI, int NI>() { start.template operator()<MI * NT + NI>(MI, NI); });
  for (Index step = 0; step < steps; ++step) {
    [&]<int... MI>(std::integer_sequence<int, MI...>) {
      (load<4 + MI>(a + MI * 16 * a_stride + step * 64, a_stride), ...);
    }(std::make_integer_sequence<int, MT>{});
    [&]<int... NI>(std::integer_sequence<int, NI...>) {
      (load<kB + NI>(b + step * 16 * b_stride + NI * 64, b_stride), ...);
    }(std::make_integer_sequence<int, NT>{});
    each_sum([&]<int MI, int NI>() {
      static_assert(is_used_triple(MI * NT + NI, 4 + MI, kB + NI));
      Dot::template run<MI * NT + NI, 4 + MI, kB + NI>();
    });
  }
  each_sum([&]<int MI, int NI>() { finish.template operator()<MI * NT + NI>(MI, NI); });
}

// Products: bf16 pairs into float32 (tdpbf16ps); bytes' quads into int32 (tdpb[su][su]d, A's
// signedness first).
struct DotBf16 {
  template <int S, int A, int B>
  static void run() {
#define OPTUNE_AMX_DOT(s, a, b) \
  if constexpr (S == s && A == a && B == b) _tile_dpbf16ps(s, a, b);
    OPTUNE_AMX_EACH_TRIPLE(OPTUNE_AMX_DOT)
#undef OPTUNE_AMX_DOT
  }
};
template <bool ASigned, bool BSigned>
struct DotInt8 {
  template <int S, int A, int B>
  static void run() {
#define OPTUNE_AMX_DOT(s, a, b)                                  \
  if constexpr (S == s && A == a && B == b) {                    \
    if constexpr (!ASigned && BSigned) _tile_dpbusd(s, a, b);    \
    else if constexpr (ASigned && !BSigned) _tile_dpbsud(s, a, b); \
    else if constexpr (ASigned) _tile_dpbssd(s, a, b);           \
    else _tile_dpbuud(s, a, b);                                  \
  }
    OPTUNE_AMX_EACH_TRIPLE(OPTUNE_AMX_DOT)
#undef OPTUNE_AMX_DOT
  }
};
#undef OPTUNE_AMX_EACH_TRIPLE

// Rows [first, first + rows) of a block of `width` bytes a row at `src` (rows `src_stride` bytes
// apart, `valid_rows` of them) into rows of `padded` bytes at `dst`: zeros past the width and past
// the valid rows, so every slab of the copy is whole.
inline void copy_padded_rows(const std::uint8_t* src, Index src_stride, Index valid_rows, Index width,
                             std::uint8_t* dst, Index padded, Index first, Index rows) {
  for (Index r = first; r < first + rows; ++r) {
    std::uint8_t* row = dst + r * padded;
    const Index copied = r < valid_rows ? width : 0;
    if (copied) std::copy_n(src + r * src_stride, copied, row);
    std::fill(row + copied, row + padded, std::uint8_t{0});
  }
}

// One micro-tile of C as walk_blocks hands it over.
struct MicroTileAt {
  const std::uint8_t* a;  // A's rows for it: in place, or the block's zero-padded copy
  Index a_stride;         // bytes between those rows
  const std::uint8_t* b;  // its packed B panel: rows of NR columns' 4-byte groups, 16 rows a step
  Index steps;            // 64-byte steps of depth in this depth block
  Index row, column;      // C's first row and column of the tile
  Index block_column;     // the tile's first column within its NC-column block
  Index rows, columns;    // how much of the MR x NR tile lies inside C
  bool first, last;       // the depth block is K's first, its last
};

// The blocked loops both AMX GEMMs run (gemm_int8.hpp, gemm_bf16.hpp): NC-column blocks of C, then
// KC-deep blocks, whose B panels `pack_b(kc, columns, depth, column, panel)` writes (NR columns'
// groups of 4 bytes a row; the walk zero-pads them to whole 64-byte steps), then MC-row blocks of
// A, read in place (`pack_a` off and K in whole steps) or copied with zeros past KC and past M up
// to whole tiles (A's last rows short of MR are copied even in place), then every MR x NR
// micro-tile given to `tile(MicroTileAt)`. Step: A's elements in a 64-byte step (64 bytes, 32 bf16).
template <int MR, int NR, int Step, typename Element, typename PackB, typename Tile>
void walk_blocks(Index M, Index N, Index K, const Element* A, Index lda, Index mc_block, Index nc_block,
                 Index kc_block, bool pack_a, PackB&& pack_b, Tile&& tile) {
  static_assert(Step * sizeof(Element) == 64, "a step is a tile row's 64 bytes");
  constexpr Index kBytes = sizeof(Element);
  auto ceil_div = [](Index a, Index b) { return (a + b - 1) / b; };
  thread_local AlignedBuffer a_buffer, b_buffer;
  const Index kc_max = ceil_div(std::min(kc_block, K), Step) * Step;
  const Index mc_max = std::min(mc_block, ceil_div(M, MR) * MR), nc_max = std::min(nc_block, ceil_div(N, NR) * NR);
  // Sizes in floats (4 bytes).
  auto* packed_a = reinterpret_cast<std::uint8_t*>(a_buffer.reserve(static_cast<std::size_t>(mc_max * kc_max * kBytes / 4)));
  auto* packed_b = reinterpret_cast<std::uint8_t*>(b_buffer.reserve(static_cast<std::size_t>(nc_max * kc_max * kBytes / 4)));
  const bool in_place = !pack_a && K % Step == 0;
  const auto* a_bytes = reinterpret_cast<const std::uint8_t*>(A);
  configure();
  for (Index jc = 0; jc < N; jc += nc_block) {
    const Index nc = std::min(nc_block, N - jc);
    for (Index pc = 0; pc < K; pc += kc_block) {
      const Index kc = std::min(kc_block, K - pc), padded = ceil_div(kc, Step) * Step;
      for (Index j = 0; j < ceil_div(nc, NR); ++j) {
        std::uint8_t* panel = packed_b + j * NR * padded * kBytes;
        pack_b(kc, std::min<Index>(NR, nc - j * NR), pc, jc + j * NR, panel);
        std::fill(panel + ceil_div(kc * kBytes, 4) * 4 * NR, panel + padded * kBytes * NR, std::uint8_t{0});
      }
      for (Index ic = 0; ic < M; ic += mc_block) {
        const Index mc = std::min(mc_block, M - ic), row_tiles = ceil_div(mc, MR);
        auto copy_rows = [&](Index first_row, Index rows) {
          copy_padded_rows(a_bytes + (ic * lda + pc) * kBytes, lda * kBytes, mc, kc * kBytes, packed_a,
                           padded * kBytes, first_row, rows);
        };
        if (!in_place) copy_rows(0, row_tiles * MR);
        for (Index j = 0; j < ceil_div(nc, NR); ++j) {
          const std::uint8_t* b = packed_b + j * NR * padded * kBytes;
          for (Index i = 0; i < row_tiles; ++i) {
            const Index m = std::min<Index>(MR, mc - i * MR);
            const std::uint8_t* a = packed_a + i * MR * padded * kBytes;
            Index a_stride = padded * kBytes;
            if (in_place && m == MR) {
              a = a_bytes + ((ic + i * MR) * lda + pc) * kBytes;
              a_stride = lda * kBytes;
            } else if (in_place) {
              copy_rows(i * MR, MR);  // the last rows, short of a tile: padded with zero rows
            }
            tile(MicroTileAt{a, a_stride, b, padded / Step, ic + i * MR, jc + j * NR, j * NR, m,
                             std::min<Index>(NR, nc - j * NR), pc == 0, pc + kc >= K});
          }
        }
      }
    }
  }
  _tile_release();
}

}  // namespace optune::kernels::cpu::amx
#endif
