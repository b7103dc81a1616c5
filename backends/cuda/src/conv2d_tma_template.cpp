// The "conv2d_tma.cuda" template: conv2d in bf16 or f16 on Hopper's tensor cores as an implicit
// GEMM, on channels-last tensors (layout nhwc: input NHWC, filter KRSC, output NHWC), groups 1.
// The kernel is gemm_tma.cu's (warp-specialised, TMA copies, wgmma with float32 accumulation) with
// A the input's im2col view, which the Tensor Memory Accelerator gathers itself (padding read as
// zeros): C (N P Q x K) = A (N P Q x R S C) * B^T (K x R S C). Its knobs and their rules are the
// GEMM's (wgmma_tile.hpp) on that GEMM, K counted in whole 64-channel slices of each filter tap.
// It takes compute capability 9.0, C and K in multiples of 8 (the copies' 16-byte rows), and
// padding, stride and dilation within the im2col copy's limits. A 1 x 1 filter at stride 1 without
// padding reads every input pixel once, in the output's order: A is then the NHWC input itself, an
// (N H W) x C matrix, which the GEMM's plain tiled copies bring (pointwise()).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cuda_template.hpp"
#include "gemm_support.hpp"
#include "templates.hpp"
#include "wgmma_tile.hpp"

namespace optune::backends::cuda {
namespace {

namespace ss = search_space;
using kernels::DataType;

constexpr std::int64_t kSliceChannels = 64;  // a K slice: 64 channels of one filter tap (128 bytes)
// The im2col copy's filter offsets are 16 bits (its corners and strides: tensor_map.hpp).
constexpr std::int64_t kMaxOffset = 65535;

// The GEMM the convolution is: rows the output's pixels, columns its channels, K the filter taps'
// slices of 64 channels.
kernels::GemmShape implicit_gemm(const kernels::Conv2dShape& c) {
  return {c.N * c.out_h() * c.out_w(), c.K, c.R * c.S * ceil_div(c.C, kSliceChannels) * kSliceChannels};
}

bool pointwise(const kernels::Conv2dShape& c) { return c.R == 1 && c.S == 1 && c.stride == 1 && c.pad == 0; }

class CudaConv2dTmaTemplate final : public GemmTemplateBase {
 public:
  std::string name() const override { return "conv2d_tma.cuda"; }
  kernels::Op op() const override { return kernels::Op::kConv2d; }
  std::vector<DataType> dtypes() const override { return {DataType::kF16, DataType::kBF16}; }

  bool applies(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    const auto& c = workload.conv();
    const std::int64_t reach = std::max((c.R - 1) * c.dilation, (c.S - 1) * c.dilation);
    return device.nvidia_compute_capability() == 90 && workload.layout_block == kernels::kLayoutNhwc &&
           c.groups == 1 && c.C % 8 == 0 && c.K % 8 == 0 && c.pad <= kMaxIm2colCorner + 1 &&
           c.pad - reach >= -kMaxIm2colCorner - 1 && c.pad - reach <= kMaxIm2colCorner &&
           c.stride <= std::int64_t(kMaxTraversalStride) &&
           reach <= kMaxOffset && c.N * c.out_h() * c.out_w() < (std::int64_t(1) << 31);
  }

  ss::ConfigSpace space(const kernels::Workload& workload, const kernels::DeviceInfo& device) const override {
    if (!applies(workload, device))
      throw std::invalid_argument(fmt::format(
          "{}: {} needs compute capability 9.0, layout nhwc, groups 1, C and K in multiples of 8, padding up to "
          "128, stride up to 8",
          name(), workload.key()));
    return wgmma_space(implicit_gemm(workload.conv()), device, /*producer_warpgroup=*/true, {2, 3, 4, 5, 6});
  }

  // Read at run time (the kernel's last argument; the launch's grid): configs that differ only in
  // them share a cubin.
  std::vector<std::string> run_time_knobs() const override { return {WgmmaTile::kGroupM, WgmmaTile::kPersistent}; }

  // The GEMM's defaults (tma_preferred_configs): untuned, 0.81x cuDNN in geometric mean over
  // ResNet-50's layers on an H200 (0.95x tuned).
  ss::Config default_config(const kernels::Workload&, const kernels::DeviceInfo&,
                            const ss::ConfigSpace& space) const override {
    return preferred_config(space, tma_preferred_configs(), name());
  }

  CudaKernel cuda_kernel(const kernels::Workload& workload, const kernels::DeviceInfo& device,
                         const ss::ConfigView& config) const override {
    const auto& c = workload.conv();
    const kernels::GemmShape gemm = implicit_gemm(c);
    const WgmmaTile t(config, /*producer_warpgroup=*/true);
    auto defines = t.defines(device.cores);
    if (pointwise(c))
      defines.emplace_back("B_K_MAJOR", 1);  // a GEMM of the filter's K-major rows
    else
      defines.insert(defines.end(), {{"CONV_C", c.C},
                                     {"CONV_R", c.R},
                                     {"CONV_S", c.S},
                                     {"CONV_P", c.out_h()},
                                     {"CONV_Q", c.out_w()},
                                     {"CONV_STRIDE", c.stride},
                                     {"CONV_PAD", c.pad},
                                     {"CONV_DILATION", c.dilation}});
    CudaKernel kernel =
        gemm_kernel("gemm_tma", defines, t.group_m, gemm, workload.dtype, t.blocks(gemm, device.cores), t.threads(), t.shared_bytes());
    // A: the block's pixels by a slice's 64 channels through the im2col view (pointwise: the
    // (N H W) x C input's rows); B (the K x R S C filter): a slice's 64 columns by the block's (a
    // multicast pair's half) rows.
    kernel.tensor_maps = {pointwise(c) ? matrix_map(0, workload.dtype, gemm.M, c.C, t.bm(), kSliceChannels,
                                                    CU_TENSOR_MAP_SWIZZLE_128B)
                                       : im2col_map(0, workload.dtype, c.N, c.H, c.W, c.C, c.R, c.S, c.stride, c.pad,
                                                    c.dilation, t.bm(), kSliceChannels),
                          matrix_map(1, workload.dtype, c.K, c.R * c.S * c.C, t.bn / t.cluster_m, kSliceChannels,
                                     CU_TENSOR_MAP_SWIZZLE_128B)};
    if (t.tma_store) kernel.tensor_maps.push_back(store_map(2, workload.dtype, gemm));  // the NHWC output
    return kernel;
  }

  std::vector<std::pair<std::string, double>> derived_features(const kernels::Workload& workload,
                                                               const kernels::DeviceInfo& device,
                                                               const ss::ConfigView& config) const override {
    return wgmma_tma_features(WgmmaTile(config, true), implicit_gemm(workload.conv()), device);
  }
};

}  // namespace

const kernels::KernelTemplate& conv2d_tma_template() {
  static const CudaConv2dTmaTemplate instance;
  return instance;
}

}  // namespace optune::backends::cuda
