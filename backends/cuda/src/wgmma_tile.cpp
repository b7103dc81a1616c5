#include "wgmma_tile.hpp"

#include <algorithm>

#include "gemm_support.hpp"

namespace optune::backends::cuda {
namespace {

namespace ss = search_space;

constexpr std::int64_t kSliceBytes = 128;        // a slice's row: 64 k of 16-bit elements, 128 of fp8
constexpr std::int64_t kAlignmentSlack = 1024;   // the swizzle atoms' 1024-byte alignment
constexpr std::int64_t kBarrierBytes = 8;        // an mbarrier
constexpr std::int64_t kMaxAccumulators = 128;
constexpr std::int64_t kStagingBytes = 2 * 64 * 128;  // TMA stores: two 64 x 64 pieces of 16-bit C a consumer

}  // namespace

WgmmaTile::WgmmaTile(const ss::ConfigView& v, bool producer_warpgroup)
    : bn(std::int64_t(v.number(kBn))), mi(std::int64_t(v.number(kMi))), wgs(std::int64_t(v.number(kWgs))),
      stages(std::int64_t(v.number(kStages))), group_m(std::int64_t(v.number(kGroupM))),
      producer(producer_warpgroup) {
  if (!producer) return;
  persistent = v.number(kPersistent) != 0;
  split_k = std::int64_t(v.number(kSplitK));
  cluster_m = std::int64_t(v.number(kClusterM));
  pingpong = v.number(kPingpong) != 0;
  tma_store = v.number(kTmaStore) != 0;
  stream_k = v.number(kStreamK) != 0;
  fp8 = v.has(kPromoteEvery);
  promote_every = fp8 ? std::int64_t(v.number(kPromoteEvery)) : 0;
}

std::int64_t WgmmaTile::shared_bytes() const {
  std::int64_t bytes = stages * (bm() + bn) * kSliceBytes + kAlignmentSlack;
  if (producer) bytes += 2 * stages * kBarrierBytes + (pingpong ? 2 * kBarrierBytes : 0);
  if (stream_k) bytes += wgs * kBarrierBytes;  // a word a consumer warpgroup for the hand-over's verdict
  if (tma_store) bytes += wgs * kStagingBytes;
  if (split_k > 1) bytes += bm() * bn * 4 + 2 * wgs * kBarrierBytes;
  return bytes;
}

std::int64_t WgmmaTile::tiles(const kernels::GemmShape& s) const {
  return ceil_div(s.M, bm() * cluster_m) * ceil_div(s.N, bn);
}

std::int64_t WgmmaTile::k_slices(const kernels::GemmShape& s) const { return ceil_div(s.K, fp8 ? 128 : 64); }

std::int64_t WgmmaTile::blocks(const kernels::GemmShape& s, int sms) const {
  if (stream_k) return sms;
  const std::int64_t clusters =
      persistent ? std::min<std::int64_t>(tiles(s), std::max<std::int64_t>(1, sms / cluster())) : tiles(s);
  return clusters * cluster();
}

std::vector<std::pair<const char*, std::int64_t>> WgmmaTile::defines(int sms) const {
  std::vector<std::pair<const char*, std::int64_t>> defines = {
      {"BN", bn}, {"MI", mi}, {"WGS", wgs}, {"STAGES", stages}};
  if (producer) {
    defines.emplace_back("SPLIT_K", split_k);
    defines.emplace_back("CLUSTER_M", cluster_m);
    defines.emplace_back("PINGPONG", pingpong ? 1 : 0);
    defines.emplace_back("TMA_STORE", tma_store ? 1 : 0);
    defines.emplace_back("STREAM_K", stream_k ? sms : 0);
    if (fp8) defines.emplace_back("PROMOTE_EVERY", promote_every);
  }
  return defines;
}

nlohmann::json tma_preferred_configs() {
  using T = WgmmaTile;
  auto config = [](int bn, int mi, int wgs, int stages, int group_m, int persistent) {
    return nlohmann::json{{T::kBn, bn},        {T::kMi, mi},         {T::kWgs, wgs},         {T::kStages, stages},
                          {T::kGroupM, group_m}, {T::kPersistent, persistent}, {T::kSplitK, 1}, {T::kClusterM, 1},
                          {T::kPingpong, 0},   {T::kTmaStore, 1},   {T::kStreamK, 0}};
  };
  return nlohmann::json::array({config(256, 1, 2, 4, 8, 1), config(128, 2, 1, 6, 1, 0), config(64, 2, 1, 6, 1, 0)});
}

TensorMapArgument store_map(std::size_t buffer, kernels::DataType dtype, const kernels::GemmShape& s) {
  const kernels::DataType out = dtype == kernels::DataType::kE4M3 ? kernels::DataType::kBF16 : dtype;
  return matrix_map(buffer, out, s.M, s.N, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
}

ss::ConfigSpace wgmma_space(const kernels::GemmShape& s, const kernels::DeviceInfo& device, bool producer,
                            std::vector<double> stages, bool fp8) {
  ss::ConfigSpace space;
  space.add(knob(WgmmaTile::kBn, {64, 128, 192, 256}));
  space.add(knob(WgmmaTile::kMi, {1, 2}));
  space.add(knob(WgmmaTile::kWgs, {1, 2}));
  space.add(knob(WgmmaTile::kStages, std::move(stages)));
  space.add(knob(WgmmaTile::kGroupM, {1, 8}));
  if (fp8) space.add(knob(WgmmaTile::kPromoteEvery, {1, 2, 4, 0}));
  const double max_threads = double(device.max_work_group_size);
  space.add_constraint("the block's threads fit the device", [max_threads, producer](const ss::ConfigView& v) {
    return max_threads <= 0 || double(WgmmaTile(v, producer).threads()) <= max_threads;
  });
  space.add_constraint("at most 128 accumulators per thread", [producer](const ss::ConfigView& v) {
    return WgmmaTile(v, producer).accumulators() <= kMaxAccumulators;
  });
  add_tile_rules(space, s, device, [producer](const ss::ConfigView& v) {
    const WgmmaTile t(v, producer);
    return TileExtent{t.bm() * t.cluster_m, t.bn, t.group_m, t.shared_bytes()};
  });
  if (!producer) return space;
  space.add(knob(WgmmaTile::kPersistent, {0, 1}));
  space.add(knob(WgmmaTile::kSplitK, {1, 2, 4}));
  space.add(knob(WgmmaTile::kClusterM, {1, 2}));
  space.add(knob(WgmmaTile::kPingpong, {0, 1}));
  space.add(knob(WgmmaTile::kTmaStore, {0, 1}));
  space.add(knob(WgmmaTile::kStreamK, {0, 1}));
  space.read_missing_as(WgmmaTile::kTmaStore, 0);
  space.read_missing_as(WgmmaTile::kStreamK, 0);
  const int sms = device.cores;
  space.add_constraint("persistent only where clusters outnumber the SMs", [s, sms](const ss::ConfigView& v) {
    const WgmmaTile t(v, true);
    return !t.persistent || t.tiles(s) * t.cluster() > sms;
  });
  space.add_constraint("split-K parts of two slices or more", [s](const ss::ConfigView& v) {
    const WgmmaTile t(v, true);
    return t.split_k == 1 || ceil_div(s.K, 64) >= 2 * t.split_k;
  });
  space.add_constraint("a cluster splits K or shares B, not both", [](const ss::ConfigView& v) {
    const WgmmaTile t(v, true);
    return t.split_k == 1 || t.cluster_m == 1;
  });
  space.add_constraint("ping-pong takes two consumers and all of K", [](const ss::ConfigView& v) {
    const WgmmaTile t(v, true);
    return !t.pingpong || (t.wgs == 2 && t.split_k == 1);
  });
  space.add_constraint("stream-K blocks work alone", [](const ss::ConfigView& v) {
    const WgmmaTile t(v, true);
    return !t.stream_k || (t.cluster() == 1 && !t.pingpong && !t.persistent);
  });
  space.add_constraint("stream-K where tiles fill the SMs unevenly, two slices a block or more",
                       [s, sms](const ss::ConfigView& v) {
                         const WgmmaTile t(v, true);
                         return !t.stream_k || (sms > 0 && t.tiles(s) % sms != 0 && t.tiles(s) * t.k_slices(s) >= 2 * sms);
                       });
  return space;
}

std::vector<std::pair<std::string, double>> wgmma_features(const WgmmaTile& t, const kernels::GemmShape& s,
                                                           const kernels::DeviceInfo& device) {
  return tile_features(t.bm(), t.bn, t.tiles(s), device, t.accumulators(), t.shared_bytes());
}

std::vector<std::pair<std::string, double>> wgmma_tma_features(const WgmmaTile& t, const kernels::GemmShape& s,
                                                               const kernels::DeviceInfo& device) {
  auto features = wgmma_features(t, s, device);
  features.emplace_back("block.persistent", t.persistent ? 1 : 0);
  features.emplace_back("tile.split_k", double(t.split_k));
  features.emplace_back("cluster.shares_b", double(t.cluster_m));
  features.emplace_back("block.pingpong", t.pingpong ? 1 : 0);
  features.emplace_back("epilogue.tma_store", t.tma_store ? 1 : 0);
  features.emplace_back("block.stream_k", t.stream_k ? 1 : 0);
  if (t.fp8) features.emplace_back("mma.promote_every", double(t.promote_every));
  return features;
}

}  // namespace optune::backends::cuda
