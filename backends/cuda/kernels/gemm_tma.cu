// C = A * B in bf16 or f16 on Hopper, A M x K and B K x N and C M x N row-major: the kernel of
// "gemm_tma.cuda". fp8 (OPTUNE_E4M3): C (bf16) = scale_a * scale_b * A * B^T with A M x K and B
// N x K in e4m3, as torch._scaled_mm; B's buffers are then K-major rows of n like A's. Warp-specialised: a producer warpgroup issues the Tensor Memory Accelerator's
// bulk copies (one thread, cp.async.bulk.tensor) of each K slice into a STAGES-deep ring of
// shared-memory buffers; WGS consumer warpgroups, each computing MI tiles of 64 rows x BN columns,
// run wgmma.mma_async on them (float32 accumulation). Two mbarriers per buffer hand it over: `full`
// completes when the copies' bytes have landed, `empty` when every consumer warp is done with it,
// so no block-wide barrier sits in the main loop. The producer gives most of its registers to the
// consumers (setmaxnreg). The shared-memory layouts are gemm_wgmma.cu's (the TMA's 128-byte swizzle
// writes them): A K-major, B MN-major in slabs of 64 n, so B needs wgmma's transpose flag.
// Blocks walk C's tiles from blockIdx.x in steps of gridDim.x: a grid smaller than the tile count
// makes the kernel persistent (the producer loads the next tile while the consumers store this one).
// Split-K (SPLIT_K > 1, for short M, where C's tiles are too few to fill the SMs): a cluster of
// SPLIT_K blocks shares each tile, block r of it taking the r-th part of K; the others leave their
// float partial sums in their own shared memory and the cluster's first block adds them up through
// distributed shared memory (ld.shared::cluster) and stores the tile. mbarriers in the first block
// (`ready`, one per consumer warpgroup) and in each other (`done`) order the hand-over.
// Ping-pong (PINGPONG = 1, two consumer warpgroups): each warpgroup computes whole tiles of its own,
// the block's even tiles and odd tiles; the producer fills the ring with one tile's slices after
// the other's, so one warpgroup's stores run while the other keeps the tensor cores busy. The two
// take turns (an mbarrier each, `turn`): a warpgroup starts a tile's slices once the other has
// waited for all of its own, which also keeps every wait on a `full` barrier within one phase of
// it (the parity a wait names could otherwise be two phases early).
// Stream-K (STREAM_K = the grid's blocks, one per SM; for shapes whose tiles fill the SMs unevenly):
// the tiles of whole waves go a tile a block as a persistent walk's; the K slices of the rest, tile
// after tile, are cut into STREAM_K equal shares, one a block, so a block's first and last tiles
// there may be parts of tiles. Each part of a shared tile leaves its float sums in its block's slot
// of a global workspace and counts itself on the tile's counter; the part that counts last adds the
// others' sums and stores the tile. No block waits for another, so a share's time is its slices'
// and one hand-over (a block that waited for the tile's other parts would take as long as a whole
// tile, which is what stream-K is there to avoid), and the blocks need not all be resident at once.
// Multicast (CLUSTER_M = 2): a cluster of two blocks computes two tiles one above the other, which
// read the same B: each block copies half of B's slabs once into both blocks' shared memory (TMA
// multicast), halving B's traffic from L2; a buffer goes back to the producers once the consumers
// of both blocks are done with it.
// Stores (TMA_STORE = 1): each consumer warpgroup writes its tile in 64 x 64 pieces to two staging
// buffers of its own in shared memory, and one of its threads copies each out with the TMA
// (wgmma.cuh's store_accumulators_tma), so C leaves in whole lines while the next tile's products
// run; else (0) every thread stores its values from registers.
// fp8's accumulation: the tensor cores sum fp8 products with fewer bits than float32 keeps (about
// 14), so with PROMOTE_EVERY p > 0 every p K slices' sums go into fresh registers that are then
// added to the float32 sums (p = 1, 128 deep, as CUTLASS's and torch._scaled_mm's default;
// the wgmma groups of the p slices stay in flight, one wait per p); PROMOTE_EVERY 0 sums in the
// tensor cores throughout (fast accumulation: half the registers, no wait).
// Convolution (CONV_C defined: "conv2d_tma.cuda"), as an implicit GEMM on channels-last tensors:
// C (N P Q x K, the NHWC output) = A (N P Q x R S C, the input's im2col view) * B^T (the K x R S C
// filter, KRSC). A K slice is one filter tap (r, s) and 64 channels of it: A's copy is TMA's im2col
// mode (the BM output pixels of the tile, each the 64 channels of its input pixel at that tap, zeros
// in the padding), B's K-major rows as fp8's. Channels past C in a tap's last slice read zeros in A,
// so the filter's columns there (the next tap's) add nothing.
// Parameters: A, B, (fp8: scale_a, scale_b,) C, then the tensor maps of A (box of a 128-byte row of
// k x BM rows; convolution: the im2col view, BM pixels of 64 channels), B (16-bit GEMM: 64 n x
// 64 k; fp8 and convolution: a 128-byte row of k x BN / CLUSTER_M rows of n) and, TMA_STORE, C
// (64 x 64), all with the 128-byte swizzle, written by the host (CudaKernel::tensor_maps), and
// group_m (tile_origin), a run-time knob.
// Defines: BN MI WGS STAGES SPLIT_K CLUSTER_M PINGPONG TMA_STORE STREAM_K PROMOTE_EVERY, GEMM_M GEMM_N GEMM_K,
// OPTUNE_F16 for f16, OPTUNE_E4M3 for fp8 (else bf16), B_K_MAJOR for a 16-bit B given N x K (a 1 x 1
// convolution's filter, as a GEMM); convolution: CONV_C CONV_R CONV_S CONV_P CONV_Q CONV_STRIDE
// CONV_PAD CONV_DILATION.
#ifdef CONV_C
#define B_K_MAJOR
#endif
#include "gemm_common.cuh"
#include "hopper.cuh"
#include "wgmma.cuh"

#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif
#ifndef TMA_STORE
#define TMA_STORE 0
#endif
#ifndef STREAM_K
#define STREAM_K 0
#endif
#if !defined(OPTUNE_E4M3) || !defined(PROMOTE_EVERY)
#undef PROMOTE_EVERY
#define PROMOTE_EVERY 0  // 16-bit types: the tensor cores sum in float32
#endif
#define PROMOTE (PROMOTE_EVERY > 0)
static_assert(SPLIT_K == 1 || CLUSTER_M == 1, "a cluster either splits K or shares B");
static_assert(!PINGPONG || (WGS == 2 && SPLIT_K == 1), "ping-pong takes two consumers and all of K");
static_assert(!STREAM_K || (SPLIT_K == 1 && CLUSTER_M == 1 && !PINGPONG), "stream-K blocks work alone");
#define CLUSTER (SPLIT_K * CLUSTER_M)  // blocks per cluster (a macro: #if reads it)

constexpr int BK = 128 / sizeof(element);  // a K slice: one 128-byte row
constexpr int BM = 64 * MI * (PINGPONG ? 1 : WGS);  // rows of a block's tile
constexpr int TILE_CONSUMERS = PINGPONG ? 1 : WGS;   // warpgroups reading each buffer
constexpr int THREADS = 128 * (WGS + 1);
constexpr int A_STAGE_BYTES = BM * 128;
constexpr int B_STAGE_BYTES = BN * 128;
#ifdef CONV_C
constexpr int C_TILES = (CONV_C + BK - 1) / BK;  // a filter tap's K slices
constexpr int K_TILES = CONV_R * CONV_S * C_TILES;
#else
constexpr int K_TILES = (GEMM_K + BK - 1) / BK;
#endif
// C's tiles of a cluster: CLUSTER_M blocks' rows by BN columns.
constexpr int TILES = ((GEMM_M + BM * CLUSTER_M - 1) / (BM * CLUSTER_M)) * ((GEMM_N + BN - 1) / BN);
constexpr int PARTIAL_BYTES = SPLIT_K > 1 ? BM * BN * 4 : 0;
constexpr int STORE_BYTES = TMA_STORE ? WGS * 2 * STORE_PIECE_BYTES : 0;  // two staging buffers a consumer

// A block's work: a tile of C's (of the cluster's) and the K slices of it the block computes.
struct Work {
  int tile, k_begin, k_end;
  int slices_before;  // the block's K slices before these, over its earlier tiles (the ring's position)
};
#if STREAM_K
constexpr int WAVE_TILES = TILES - TILES % STREAM_K;  // the whole waves' tiles, walked a tile a block
constexpr long long SHARED_SLICES = (long long)(TILES - WAVE_TILES) * K_TILES;
// The first of block b's share of the other tiles' K slices (numbered over all tiles, in order).
__device__ inline int first_slice(int block) {
  return WAVE_TILES * K_TILES + int(block * SHARED_SLICES / STREAM_K);
}
// Each block's two slots (its first and last parts): thread t's sums 4 i to 4 i + 3 of warpgroup g
// at [block][slot][g][i][t] (coalesced 16-byte accesses); each shared tile's parts counted so far,
// per warpgroup (reset by the last, ready for the next launch).
__device__ float4 stream_k_partials[STREAM_K][2][WGS][MI * BN / 8][128];
__device__ unsigned stream_k_arrivals[TILES - WAVE_TILES > 0 ? TILES - WAVE_TILES : 1][WGS];
#endif
// The block's work number `ordinal` (0, 1, ...); false past its last. Split-K: the part-th share of
// each tile's slices.
__device__ inline bool block_work(int ordinal, int part, Work& work) {
#if STREAM_K
  constexpr int WAVES = WAVE_TILES / STREAM_K;
  if (ordinal < WAVES) {
    work.tile = blockIdx.x + ordinal * STREAM_K;
    work.k_begin = 0;
    work.k_end = K_TILES;
    work.slices_before = ordinal * K_TILES;
    return true;
  }
  const int begin = first_slice(blockIdx.x), end = first_slice(blockIdx.x + 1);
  const int start = ordinal == WAVES ? begin : (begin / K_TILES + ordinal - WAVES) * K_TILES;  // later ones start tiles
  if (start >= end) return false;
  work.tile = start / K_TILES;
  work.k_begin = start % K_TILES;
  work.k_end = min(K_TILES, work.k_begin + end - start);
  work.slices_before = WAVES * K_TILES + start - begin;
#else
  work.tile = blockIdx.x / CLUSTER + ordinal * (gridDim.x / CLUSTER);
  if (work.tile >= TILES) return false;
  work.k_begin = part * K_TILES / SPLIT_K;
  work.k_end = (part + 1) * K_TILES / SPLIT_K;
  work.slices_before = ordinal * (work.k_end - work.k_begin);
#endif
  return true;
}

// Registers per thread after the hand-over; 128 x 40 + 128 x WGS x CONSUMER_REGISTERS fits 64 K.
constexpr int PRODUCER_REGISTERS = 40;
constexpr int CONSUMER_REGISTERS = WGS == 1 ? 240 : WGS == 2 ? 232 : 160;

// The cluster's parts: the same, seeing what other blocks of the cluster wrote first.
__device__ inline void wait_cluster(unsigned barrier, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
}
// This block's shared-memory address as block `rank` of the cluster sees it there.
__device__ inline unsigned in_block(unsigned address, unsigned rank) {
  unsigned mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(mapped) : "r"(address), "r"(rank));
  return mapped;
}
__device__ inline void arrive_in_block(unsigned barrier, unsigned rank) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(in_block(barrier, rank))
               : "memory");
}
// An arrival with no ordering beyond the CTA's (what a buffer's release needs: wgmma's reads of it
// are complete once wgmma.wait_group returns), so the arriving warp does not wait on a cluster-wide
// fence.
__device__ inline void arrive_in_block_unordered(unsigned barrier, unsigned rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(in_block(barrier, rank)) : "memory");
}
__device__ inline float load_from_block(unsigned address, unsigned rank) {
  float value;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(value) : "r"(in_block(address, rank)) : "memory");
  return value;
}
// The same copy into the same place of every block of the cluster in `blocks` (a bit per rank),
// completing on each one's barrier at `barrier`.
__device__ inline void tma_multicast(unsigned destination, const TensorMap& map, unsigned barrier, int inner,
                                     int outer, unsigned short blocks) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(destination),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(barrier), "r"(inner), "r"(outer), "h"(blocks)
      : "memory");
}
__device__ inline unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
// Every thread of the cluster; a warp that diverged converges first (the barrier is .aligned).
__device__ inline void cluster_sync() {
  __syncwarp();
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

#if STREAM_K
// The block whose share holds K slice `slice` (numbered over all tiles) of a shared tile.
__device__ inline int block_of(int slice) {
  int block = int((slice - WAVE_TILES * K_TILES) * STREAM_K / SHARED_SLICES);
  while (block + 1 < STREAM_K && first_slice(block + 1) <= slice) ++block;
  while (first_slice(block) > slice) --block;
  return block;
}
// Block `block`'s slot for its part of `tile`: 0 where its share starts in that tile, else 1.
__device__ inline int slot_of(int block, int tile) { return first_slice(block) / K_TILES == tile ? 0 : 1; }
__device__ inline float4* slot_address(int block, int tile, int group) {
  return &stream_k_partials[block][slot_of(block, tile)][group][0][threadIdx.x % 128];
}

// Stream-K's hand-over of a part of a shared tile, among the warpgroup's threads (named barrier 3 +
// group): the sums into the block's slot, visible before the part is counted; true for the part
// counted last, whose `acc` then holds the whole tile's sums (every other part's added). `verdict`:
// a shared-memory word of the warpgroup's, where its counting thread tells the others.
__device__ inline bool last_part_of_tile(float (&acc)[MI][BN / 2], int group, int tile, unsigned verdict) {
  float4* mine = slot_address(blockIdx.x, tile, group);
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int j = 0; j < BN / 2; j += 4)
      __stcg(mine + (mi * BN / 2 + j) / 4 * 128, make_float4(acc[mi][j], acc[mi][j + 1], acc[mi][j + 2], acc[mi][j + 3]));
  __threadfence();
  named_barrier(3 + group, 128);
  const int first = block_of(tile * K_TILES), last = block_of((tile + 1) * K_TILES - 1);
  if (threadIdx.x % 128 == 0) {
    int parts = 0;  // blocks with slices of the tile (a share may be empty where the slices are few)
    for (int block = first; block <= last; ++block) parts += first_slice(block) < first_slice(block + 1);
    unsigned* arrivals = &stream_k_arrivals[tile - WAVE_TILES][group];
    unsigned before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\n" : "=r"(before) : "l"(arrivals) : "memory");
    const unsigned last_part = before == unsigned(parts - 1);
    if (last_part) *arrivals = 0;
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(verdict), "r"(last_part) : "memory");
  }
  named_barrier(3 + group, 128);
  unsigned last_part;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(last_part) : "r"(verdict) : "memory");
  if (!last_part) return false;
  for (int block = first; block <= last; ++block) {
    if (block == int(blockIdx.x) || first_slice(block) == first_slice(block + 1)) continue;
    const float4* slot = slot_address(block, tile, group);
    // Eight loads in flight before their sums wait for them.
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int j = 0; j < BN / 2; j += 32) {
        float4 part[8];
#pragma unroll
        for (int q = 0; q < 8; ++q) part[q] = __ldcg(slot + (mi * BN / 2 + j) / 4 * 128 + q * 128);
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          acc[mi][j + 4 * q] += part[q].x;
          acc[mi][j + 4 * q + 1] += part[q].y;
          acc[mi][j + 4 * q + 2] += part[q].z;
          acc[mi][j + 4 * q + 3] += part[q].w;
        }
      }
  }
  return true;
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
#if CLUSTER > 1
    __cluster_dims__(CLUSTER, 1, 1)
#endif
    gemm_tma(const element* __restrict__ A, const element* __restrict__ B,
#ifdef OPTUNE_E4M3
             const float* __restrict__ scale_a, const float* __restrict__ scale_b,
#endif
             out_element* __restrict__ C, const __grid_constant__ TensorMap map_a,
             const __grid_constant__ TensorMap map_b
#if TMA_STORE
             ,
             const __grid_constant__ TensorMap map_c
#endif
             ,
             int group_m) {
  extern __shared__ __align__(1024) unsigned char shared_bytes[];
  // The swizzle atoms must start on 1024-byte boundaries; the barriers follow the buffers.
  const unsigned base = (shared_address(shared_bytes) + 1023) & ~1023u;
  const unsigned a_stages = base, b_stages = base + STAGES * A_STAGE_BYTES;
  const unsigned staging = b_stages + STAGES * B_STAGE_BYTES;  // TMA stores: each consumer's two pieces
  const unsigned partials = staging + STORE_BYTES;              // split-K: this block's float sums
  const unsigned barriers = partials + PARTIAL_BYTES;
  auto full = [&](int stage) { return barriers + 8 * stage; };
  auto empty = [&](int stage) { return barriers + 8 * (STAGES + stage); };
  auto ready = [&](int group) { return barriers + 8 * (2 * STAGES + group); };       // first block's
  auto done = [&](int group) { return barriers + 8 * (2 * STAGES + WGS + group); };  // the others'
  auto turn = [&](int group) { return barriers + 8 * (2 * STAGES + group); };  // ping-pong (never split)
#if STREAM_K
  auto verdict = [&](int group) { return barriers + 8 * (2 * STAGES + group); };  // stream-K (neither)
#endif

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      barrier_init(full(s), 1);
      barrier_init(empty(s), 4 * TILE_CONSUMERS * CLUSTER_M);  // one per consumer warp of the blocks sharing it
    }
    for (int g = 0; g < WGS && PINGPONG; ++g) barrier_init(turn(g), 4);  // every warp of the other
    for (int g = 0; g < WGS && SPLIT_K > 1; ++g) {
      barrier_init(ready(g), 128 * (SPLIT_K - 1));  // every thread of warpgroup g of every other block
      barrier_init(done(g), 128);                    // every thread of the first block's warpgroup g
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
#if CLUSTER > 1
  cluster_sync();  // every block of the cluster started, its barriers initialised
  const int rank = cluster_rank();
#else
  __syncthreads();
  const int rank = 0;
#endif
  // This block's share of each tile's K (split-K), and its rows of the cluster's tile (multicast).
  const int part = SPLIT_K > 1 ? rank : 0;
  const int row_offset = CLUSTER_M > 1 ? rank * BM : 0;

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGISTERS));
    if (threadIdx.x == 0) {
      int slice = 0;  // K slices issued so far, over every tile of this block
      Work work;
      for (int ordinal = 0; block_work(ordinal, part, work); ++ordinal) {
        int row0, col0;
        tile_origin<BM * CLUSTER_M, BN>(work.tile, group_m, row0, col0);
#ifdef CONV_C
        // The block's first output pixel: image, and where its window starts in the input.
        const int pixel = row0 + row_offset, image = pixel / (CONV_P * CONV_Q);
        const int window_w = pixel % CONV_Q * CONV_STRIDE - CONV_PAD;
        const int window_h = pixel / CONV_Q % CONV_P * CONV_STRIDE - CONV_PAD;
#endif
        for (int kt = work.k_begin; kt < work.k_end; ++kt, ++slice) {
          const int s = slice % STAGES, round = slice / STAGES;
          if (round > 0) wait(empty(s), (round - 1) & 1);
          // Every byte of the stage lands here, the peer's multicast halves of B too.
          arrive_expecting(full(s), A_STAGE_BYTES + B_STAGE_BYTES);
#ifdef CONV_C
          const int tap = kt / C_TILES, channel = kt % C_TILES * BK;
          tma_load_im2col(a_stages + s * A_STAGE_BYTES, map_a, full(s), channel, window_w, window_h, image,
                          tap % CONV_S * CONV_DILATION, tap / CONV_S * CONV_DILATION);
          const int b_k = tap * CONV_C + channel;  // the filter's column: (r, s, c) row-major
#else
          tma_load(a_stages + s * A_STAGE_BYTES, map_a, full(s), kt * BK, row0 + row_offset);
          const int b_k = kt * BK;
#endif
#ifdef B_K_MAJOR
          // B's BN rows of n, each block of a multicast pair copying its half to both.
          const unsigned b_stage = b_stages + s * B_STAGE_BYTES;
          if (CLUSTER_M == 1)
            tma_load(b_stage, map_b, full(s), b_k, col0);
          else
            tma_multicast(b_stage + rank * (B_STAGE_BYTES / CLUSTER_M), map_b, full(s), b_k,
                          col0 + rank * (BN / CLUSTER_M), (1u << CLUSTER_M) - 1);
#else
#pragma unroll
          for (int slab = 0; slab < BN / 64; ++slab) {
            const unsigned destination = b_stages + s * B_STAGE_BYTES + slab * WGMMA_SLAB_BYTES;
            if (CLUSTER_M == 1)
              tma_load(destination, map_b, full(s), col0 + slab * 64, b_k);
            else if (slab % CLUSTER_M == rank)
              tma_multicast(destination, map_b, full(s), col0 + slab * 64, b_k, (1u << CLUSTER_M) - 1);
          }
#endif
        }
      }
    }
#if CLUSTER_M > 1
    cluster_sync();  // see the consumers' end
#endif
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGISTERS));
  const int group = warpgroup - 1;
  const int lane = threadIdx.x % 32;
  const int a_group = PINGPONG ? 0 : group;  // this warpgroup's rows of the tile, in 64 x MI
  int round = 0;                             // tiles done
#if TMA_STORE
  int stores = 0;  // this warpgroup's pieces copied out
#endif
#ifdef OPTUNE_E4M3
  const float scale = *scale_a * *scale_b;
#else
  const float scale = 1.0f;
#endif
  // A buffer goes back to the producer of every block whose multicast fills it: lane r of each
  // consumer warp tells block r.
  auto release = [&](int stage) {
    if (CLUSTER_M == 1) {
      if (lane == 0) arrive(empty(stage));
    } else if (lane < CLUSTER_M) {
      arrive_in_block_unordered(empty(stage), lane);
    }
  };
  // The block's tiles in order; ping-pong: this warpgroup's every other one.
  Work work;
  for (int ordinal = PINGPONG ? group : 0; block_work(ordinal, part, work); ordinal += PINGPONG ? 2 : 1, ++round) {
    const int k_begin = work.k_begin, k_end = work.k_end;
    int slice = work.slices_before;
    __builtin_assume(slice >= 0);  // (its remainders are then the cheap unsigned ones)
    int row0, col0;
    tile_origin<BM * CLUSTER_M, BN>(work.tile, group_m, row0, col0);
    row0 += row_offset;
    float acc[MI][BN / 2];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int j = 0; j < BN / 2; ++j) acc[mi][j] = 0.0f;

#if PROMOTE
    float sums[MI][BN / 2];
    int pending = -1;  // a stage whose wgmma group may still be reading it
#endif
#if PINGPONG
    // Warpgroup 0's first tile goes first; every later start waits for the other's turn to end.
    if (group == 1 || round > 0) wait(turn(group), (group == 1 ? round : round - 1) & 1);
#endif
    for (int kt = k_begin; kt < k_end; ++kt, ++slice) {
      const int s = slice % STAGES;
      wait(full(s), (slice / STAGES) & 1);
      const unsigned a_stage = a_stages + s * A_STAGE_BYTES, b_stage = b_stages + s * B_STAGE_BYTES;
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#if PROMOTE
      // This group of PROMOTE_EVERY slices' sums, from the tensor cores' narrower accumulation.
      const int in_group = (kt - k_begin) % PROMOTE_EVERY;
      wgmma_slice<MI>(sums, a_stage + a_group * MI * 64 * 128, b_stage, /*fresh=*/in_group == 0);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      if (in_group == PROMOTE_EVERY - 1 || kt == k_end - 1) {
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        if (pending >= 0) release(pending);
        release(s);
        pending = -1;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
          for (int j = 0; j < BN / 2; ++j) acc[mi][j] += sums[mi][j];
      } else {
        // The previous slice's group is done: its buffer goes back; this one's stays pending.
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        if (pending >= 0) release(pending);
        pending = s;
      }
#else
      wgmma_slice<MI>(acc, a_stage + a_group * MI * 64 * 128, b_stage);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      // One group in flight: the previous slice's is done, so its buffer goes back to the producer.
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      if (kt > k_begin) release((slice - 1) % STAGES);
#endif
    }
#if PINGPONG
    if (lane == 0) arrive(turn(1 - group));  // every slice of this tile waited for: the other's turn
#endif
#if !PROMOTE
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    release((slice - 1) % STAGES);
#endif

#if SPLIT_K > 1
    // Thread t's sum i of warpgroup g at float (g * MI * BN / 2 + i) * 128 + t: coalesced.
    const unsigned mine = partials + (group * (MI * BN / 2) * 128 + threadIdx.x % 128) * 4;
    if (part != 0) {
      if (round > 0) wait_cluster(done(group), (round - 1) & 1);  // the first block read the last tile's
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j)
          asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(mine + (mi * (BN / 2) + j) * 128 * 4), "f"(acc[mi][j])
                       : "memory");
      arrive_in_block(ready(group), 0);
      continue;
    }
    wait_cluster(ready(group), round & 1);
    for (int other = 1; other < SPLIT_K; ++other) {
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) acc[mi][j] += load_from_block(mine + (mi * (BN / 2) + j) * 128 * 4, other);
      arrive_in_block(done(group), other);
    }
#endif
#if STREAM_K
    if ((k_begin > 0 || k_end < K_TILES) && !last_part_of_tile(acc, group, work.tile, verdict(group))) continue;
#endif

#if TMA_STORE
    store_accumulators_tma<MI>(map_c, acc, row0 + a_group * MI * 64, col0, scale,
                               staging + group * 2 * STORE_PIECE_BYTES, 1 + group, stores);
#else
    store_accumulators<MI>(C, acc, row0 + a_group * MI * 64, col0, scale);
#endif
  }
#if TMA_STORE
  drain_stores();  // the staging buffers outlive the copies reading them
#endif
#if SPLIT_K > 1
  // A block's shared memory must outlive the first block's reads of it.
  if (part != 0 && round > 0) wait_cluster(done(group), (round - 1) & 1);
#endif
#if CLUSTER_M > 1
  // ... and the other block's arrivals on its barriers.
  cluster_sync();
#endif
}
