// The tile both Hopper GEMM templates share (gemm_wgmma_template.cpp: cp.async copies by every
// thread; gemm_tma_template.cpp: TMA copies by a producer warpgroup): warpgroups of 64 x mi rows
// by bn columns of C, K in 64-deep slices of 128-byte swizzled rows, a stages-deep ring of them in
// shared memory, and the band of row tiles (group_m) blocks walk. Its knobs, the rules every config
// obeys, its features for the cost model.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "optune/kernels/device_info.hpp"
#include "optune/kernels/workload.hpp"
#include "optune/search_space/config_space.hpp"
#include "tensor_map.hpp"

namespace optune::backends::cuda {

struct WgmmaTile {
  // Knob names: stored in records, a contract once released.
  static constexpr const char* kBn = "bn";            // block tile in N (one wgmma's N)
  static constexpr const char* kMi = "mi";            // 64-row tiles per warpgroup
  static constexpr const char* kWgs = "wgs";          // warpgroups computing C's tile, along M
  static constexpr const char* kStages = "stages";    // K slices in flight in shared memory
  static constexpr const char* kGroupM = "group_m";   // row tiles per band of the block walk; 1: row by row
  // With a producer warpgroup (gemm_tma.cu) only:
  static constexpr const char* kPersistent = "persistent";  // 1: a block (cluster) per SM walks tiles
  static constexpr const char* kSplitK = "split_k";         // blocks of a cluster sharing a tile's K
  static constexpr const char* kClusterM = "cluster_m";     // blocks of a cluster, one above the other, sharing B
  static constexpr const char* kPingpong = "pingpong";      // 1: the two consumers take turns on tiles of their own
  static constexpr const char* kTmaStore = "tma_store";     // 1: C leaves through shared memory and TMA copies
  static constexpr const char* kStreamK = "stream_k";       // 1: a block per SM takes an equal share of all tiles' K
  // fp8 only (its space alone has the knob): p > 0 adds every p K slices' sums (128 deep each) to
  // float32 registers (twice the accumulator registers); 0 sums in the tensor cores throughout.
  static constexpr const char* kPromoteEvery = "promote_every";

  std::int64_t bn, mi, wgs, stages, group_m;
  bool producer;  // one more warpgroup that only copies (gemm_tma.cu)
  bool persistent = false;
  std::int64_t split_k = 1;
  std::int64_t cluster_m = 1;
  bool pingpong = false;
  bool tma_store = false;
  bool stream_k = false;
  bool fp8 = false;                // the config has promote_every
  std::int64_t promote_every = 0;  // fp8: slices summed by the tensor cores alone; 0 all of them

  WgmmaTile(const search_space::ConfigView& config, bool producer_warpgroup);
  std::int64_t bm() const { return 64 * mi * (pingpong ? 1 : wgs); }  // rows of a block's tile
  std::int64_t threads() const { return 128 * (wgs + (producer ? 1 : 0)); }
  std::int64_t accumulators() const { return mi * bn / 2 * (promote_every > 0 ? 2 : 1); }  // float registers per thread
  // The ring's buffers (A's bm and B's bn rows of 128 bytes each), the 1024-byte alignment of the
  // swizzle atoms; with a producer two 8-byte mbarriers per buffer (and, ping-pong, one per
  // consumer), TMA stores' two 8 KiB staging buffers per consumer and, split, the float partial
  // sums of the tile and two mbarriers per consumer.
  std::int64_t shared_bytes() const;
  std::int64_t cluster() const { return split_k * cluster_m; }  // blocks per cluster
  std::int64_t tiles(const kernels::GemmShape& s) const;        // C's tiles of a cluster each
  std::int64_t k_slices(const kernels::GemmShape& s) const;      // a tile's K slices (a convolution's may be more)
  // Blocks to launch on a device of `sms` SMs: a cluster per tile, or per SM (at most) when
  // persistent; stream-K a block per SM.
  std::int64_t blocks(const kernels::GemmShape& s, int sms) const;
  // -D defines of the tile, for kernels/gemm_wgmma.cu and gemm_tma.cu (stream-K's grid is `sms` blocks).
  std::vector<std::pair<const char*, std::int64_t>> defines(int sms) const;
};

// The knobs' values and the rules: the device's threads and shared memory, at most 128
// accumulators per thread, tiles not far beyond the matrix, group_m only where there are row
// tiles to band; `stages` the ring depths to try. With a producer, persistent only where clusters
// outnumber the SMs, split-K parts of at least two slices, a cluster either splitting K or sharing B,
// ping-pong with two consumers and no split, TMA stores (records from before the knob read 0),
// stream-K alone (no cluster, ping-pong or persistent walk), where tiles fill the SMs unevenly and
// each block gets two slices or more (records from before it read 0);
// fp8 (`fp8`) the promote_every knob.
// The 16-bit TMA kernel's defaults (gemm_tma.cuda, conv2d_tma.cuda) in order of preference, for
// preferred_config: 128 x 256 tiles of two consumers, four stages, persistent (the best at bf16
// 4096^3 on an H200); where too few tiles for that (short M), one consumer of 128 x 128, six
// stages (the best of a tune at 128 x 11008 x 4096); where N is 64 or less, 128 x 64. All store
// through TMA copies (7% faster at 4096^3, 2.5x on a 1 x 1 conv of 64 -> 256 channels).
nlohmann::json tma_preferred_configs();

// TMA stores' map of C (M x N, 16-bit: bf16 for fp8's inputs), argument `buffer`: 64 x 64 pieces.
TensorMapArgument store_map(std::size_t buffer, kernels::DataType dtype, const kernels::GemmShape& shape);

search_space::ConfigSpace wgmma_space(const kernels::GemmShape& shape, const kernels::DeviceInfo& device,
                                      bool producer_warpgroup, std::vector<double> stages, bool fp8 = false);

std::vector<std::pair<std::string, double>> wgmma_features(const WgmmaTile& tile, const kernels::GemmShape& shape,
                                                           const kernels::DeviceInfo& device);
// ... and, with a producer (gemm_tma.cu), its schedule's: persistent, split-K, B shared, ping-pong,
// TMA stores, stream-K and fp8's promotion.
std::vector<std::pair<std::string, double>> wgmma_tma_features(const WgmmaTile& tile, const kernels::GemmShape& shape,
                                                               const kernels::DeviceInfo& device);

}  // namespace optune::backends::cuda
