// Workload: one operator instance (op, shape, dtype, layout) with its canonical key.
// The key is the identity of a workload in the database and in generated headers, so its
// format is a contract (DESIGN.md): stable across versions and readable by people.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "optune/kernels/data_type.hpp"

namespace optune::kernels {

// An operator's identifier. What optune knows of an operator (its extents, key, flops, reference,
// features) is its entry in the operator catalog (operator_catalog.hpp), which the functions
// below ask; only the entries and the templates switch on Op.
// kKernel is a user's own kernel, declared in a kernel file (kernel_file.hpp): not an operator of
// the catalog, since what it computes is the file's; its workload is the file's name and extents.
enum class Op { kGemm, kConv2d, kDepthwiseConv2d, kKernel };

std::string_view op_name(Op op);                // "gemm", "conv2d", "depthwise_conv2d", "kernel"
Op parse_op(std::string_view name);             // the catalog's operators; throws std::invalid_argument

// Row-major C[M,N] = A[M,K] * B[K,N].
struct GemmShape {
  std::int64_t M = 0, N = 0, K = 0;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// NCHW input [N,C,H,W], OIHW filter [K, C/groups, R, S], output [N,K,P,Q].
// For depthwise conv2d, K == C == groups.
struct Conv2dShape {
  std::int64_t N = 1, C = 0, H = 0, W = 0, K = 0, R = 0, S = 0;
  std::int64_t stride = 1, pad = 1, dilation = 1, groups = 1;
  std::int64_t out_h() const;  // P
  std::int64_t out_w() const;  // Q
  friend bool operator==(const Conv2dShape&, const Conv2dShape&) = default;
};

// One extent of a kernel file's problem ("N" = 4096), in the file's order.
struct Extent {
  std::string name;
  std::int64_t value = 0;
  friend bool operator==(const Extent&, const Extent&) = default;
};

// A user kernel's problem: the kernel file's name and its extents. `work` is what a record's
// gflops column counts per run: the file's flops, else its bytes (the column then reads GB/s), else
// 1e9 (runs per second); a workload read back from a key alone does not know it (0).
struct KernelShape {
  std::string name;
  std::vector<Extent> extents;
  double work = 0;
  friend bool operator==(const KernelShape& a, const KernelShape& b) {
    return a.name == b.name && a.extents == b.extents;
  }
};

// The activation layout of a convolution's input and output: NCHW, or NCHW[b]c with b channels
// of a pixel contiguous (layout.hpp), as a network keeps it between its conv layers, with an OIHW
// filter in both; or NHWC. GEMMs have none (0).
inline constexpr int kLayoutNchw = 0;
// Channels last, for conv2d of groups 1 only: input [N][H][W][C], filter [K][R][S][C] (OHWI,
// PyTorch's channels_last weights), output [N][P][Q][K], as GPU implicit-GEMM templates read them
// (a pixel's channels are the GEMM's contiguous reduction). Not a channel block: a negative
// layout_block, so that only layout_block > 0 (is_blocked_layout) means NCHW[b]c.
inline constexpr int kLayoutNhwc = -1;
constexpr bool is_blocked_layout(int layout_block) { return layout_block > 0; }
std::string layout_name(int layout_block);        // "nchw", "nchw8c", "nhwc"
int parse_layout(std::string_view name);           // 0, 4, 8, 16, kLayoutNhwc; throws std::invalid_argument

// A conv2d layer's layouts as a workload names them: its layout_block, and whether it reads an
// NCHW input while writing that layout (a network's first layer: it reads the image, and writes
// the layout the network keeps). Named "nchw8c", or "nchw-nchw8c" (input-output) for the latter.
struct Layouts {
  int block = kLayoutNchw;
  bool nchw_input = false;
};
std::string layouts_name(Layouts layouts);        // "nchw", "nchw8c", "nchw-nchw8c"
Layouts parse_layouts(std::string_view name);     // throws std::invalid_argument

struct Workload {
  Op op = Op::kGemm;
  // Of the operator's operands (a catalog entry says which operand takes which type); a kernel
  // file's arguments each have their own, and its workload keeps the default.
  DataType dtype = DataType::kF32;
  std::variant<GemmShape, Conv2dShape, KernelShape> shape;
  int layout_block = kLayoutNchw;  // convolutions: 0 (NCHW), the b of NCHW[b]c, or kLayoutNhwc
  // conv2d on a layout_block > 0: the input is NCHW nonetheless (a network's first layer, which
  // reads the image), the output NCHW[b]c. Always false on NCHW and NHWC.
  bool nchw_input = false;

  // The layout of the input (the output's is layout_block).
  int input_layout_block() const { return nchw_input ? kLayoutNchw : layout_block; }
  Layouts layouts() const { return {layout_block, nchw_input}; }

  const GemmShape& gemm() const { return std::get<GemmShape>(shape); }
  const Conv2dShape& conv() const { return std::get<Conv2dShape>(shape); }
  const KernelShape& kernel() const { return std::get<KernelShape>(shape); }

  // e.g. "gemm.f32.M512.N512.K512", "conv2d.nchw.f32.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1",
  // "depthwise_conv2d.nchw8c.f32.N1.C32.H112.W112.R3.S3.st1.pad1.dil1",
  // "conv2d.nchw-nchw8c.f32.N1.C3.H224.W224.K64.R7.S7.st2.pad3.dil1.g1",
  // "conv2d.nhwc.bf16.N1.C64.H56.W56.K64.R3.S3.st1.pad1.dil1.g1",
  // "kernel.transpose.N4096.M4096" (a kernel file's name and extents in file order; no dtype)
  std::string key() const;
  double flops() const;  // multiply-adds count as 2; padded taps count as work; kernels: KernelShape::work

  friend bool operator==(const Workload&, const Workload&) = default;
};

// Parses `--shape` for an op: "M,N,K" or named extents "M=512,N=512,K=512" for GEMM; named
// extents for convolutions (DESIGN.md), which may also name their layouts ("...,layout=nchw8c",
// "...,layout=nchw-nchw8c", "...,layout=nhwc"). Throws std::invalid_argument with a one-line
// message naming the bad part (zero, negative, absurd, unknown or missing extent).
// Named shapes may give the operands' dtype ("M=512,N=512,K=512,dtype=bf16"; default f32); a
// `dtype` argument sets it for both forms (and contradicting a named one is an error).
Workload parse_workload(Op op, std::string_view shape_text, std::optional<DataType> dtype = std::nullopt);
// Inverse of Workload::key(); throws std::invalid_argument. A kernel key gives a kernel workload
// whose work is unknown (0).
Workload parse_workload_key(std::string_view key);
// The largest extent a kernel file or --shape may give: it still fits an i32 scalar and an OpenCL
// NDRange of any device; larger is a typo.
inline constexpr std::int64_t kMaxKernelExtent = (std::int64_t{1} << 31) - 1;
// A positive decimal integer of at most kMaxKernelExtent, or nullopt.
std::optional<std::int64_t> kernel_extent_value(std::string_view digits);
// A kernel file's name: at most 64 letters, digits, '_' and '-', starting with a letter. It is part
// of workload keys (kernel.<name>.N4096), where '.' separates fields.
bool is_kernel_name(const std::string& name);
// "kernel.transpose.N4096.M4096": the kernel's name, then its extents in file order.
std::string kernel_workload_key(const std::string& kernel_name, const std::vector<Extent>& extents);
struct KernelWorkloadKey {
  std::string kernel_name;
  std::vector<Extent> extents;
};
// The inverse; throws std::invalid_argument naming the key.
KernelWorkloadKey parse_kernel_workload_key(std::string_view key);

// The `--shape` text of a kernel workload's extents: "N=4096,M=4096".
std::string kernel_shape_text(const KernelShape& shape);
// A kernel file's workload of these extents; `work` as KernelShape says.
Workload kernel_workload(const std::string& kernel_name, const std::vector<Extent>& extents, double work = 0);
// The checks of parse_workload for a workload built by other means (e.g. from a suite file):
// extents in range, a positive output, channels divisible by groups, tensors within the limit.
// Throws std::invalid_argument "shape: ...".
void validate_workload(const Workload& workload);

// Largest extent accepted for any dimension, and the largest total tensor footprint: bigger
// shapes are a typo, not a workload (and would exhaust memory in the worker).
inline constexpr std::int64_t kMaxExtent = std::int64_t{1} << 20;
inline constexpr double kMaxTensorBytes = 8.0 * (1ull << 30);

}  // namespace optune::kernels
