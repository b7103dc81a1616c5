// The "gemm_bf16.cpu" and "conv2d_bf16.cpu" templates: bf16 GEMM and conv2d workloads (bf16 in
// and out, float32 accumulation) on the header-only kernel optune/kernels/cpu/gemm_bf16.hpp (the
// conv2d through conv2d_dot.hpp's im2col columns), whose micro-kernel is AVX-512 BF16's vdpbf16ps
// (two bf16 products summed into each float32 lane). They apply where the device has avx512_bf16
// (the conv2d on NCHW layers), and are then the defaults ahead of gemm.cpu and conv2d.cpu /
// conv2d_gemm.cpu, which widen bf16 to float32 (the path for every other CPU and layout). The
// knobs map one to one onto GemmBf16Config's fields (dot_gemm_template.hpp). Where the device has
// AMX's bf16 tiles (amx_bf16: Sapphire Rapids on) the knob `amx` runs the micro-tiles on them
// (mr 16 or 32, nr 16 to 48, KC a multiple of 32), the default there: on a 2-core Sapphire Rapids
// 3.0-9.3x the vdpbf16ps path (docs/performance/lowp-cpu-gemm.md).
#include "dot_gemm_template.hpp"
#include "optune/kernels/cpu/gemm_bf16.hpp"
#include "template_support.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;
using namespace dot_gemm_knobs;

constexpr const char* kAmx = "amx";  // a knob name: stored in records

bool has_amx(const DeviceInfo& device) { return device.has_isa("amx_bf16"); }
// Whether a config runs on AMX tiles (spaces of other devices have no such knob).
bool amx(const ss::ConfigView& v) { return v.has(kAmx) && v.flag(kAmx); }

class CpuBf16Template final : public DotGemmTemplate {
 public:
  using DotGemmTemplate::DotGemmTemplate;
  std::vector<DataType> dtypes() const override { return {DataType::kBF16}; }
  bool applies(const Workload& workload, const DeviceInfo& device) const override {
    if (!device.has_isa("avx512_bf16")) return false;
    if (workload.op == Op::kGemm) return true;
    const Conv2dShape& c = workload.conv();
    return c.groups == 1 && workload.layout_block == kLayoutNchw && !workload.nchw_input;
  }
  // Ahead of gemm.cpu (0), conv2d.cpu (0) and conv2d_gemm.cpu (10) where it applies.
  int priority() const override { return 20; }

 protected:
  std::string element_name() const override { return "bf16"; }
  DotGemmKernel kernel() const override { return {"gemm_bf16.hpp", "gemm_bf16", "GemmBf16Config"}; }
  int lanes(const DeviceInfo& /*device*/) const override { return 16; }  // float32 lanes of a zmm
  int max_mr(const DeviceInfo& device) const override { return has_amx(device) ? 32 : 14; }
  int default_mr(const DeviceInfo& device) const override {
    return has_amx(device) ? 32 : DotGemmTemplate::default_mr(device);
  }
  void add_type_knobs(ss::ConfigSpace& space, const DeviceInfo& device) const override {
    if (!has_amx(device)) return;
    space.add(ss::BoolKnob{kAmx});
  }
  void add_type_rules(ss::ConfigSpace& space, const DeviceInfo& device) const override {
    if (!has_amx(device)) return;
    // Measured on a 2-core Sapphire Rapids: the tiles at least match the vectors from M = 4 on
    // (4 x 4096 x 4096: 62 against 51 GFLOP/s) and run 3-9x faster from M = 32.
    space.add_constraint("amx on, where the device has AMX tiles (the vector path is no faster there)",
                         [](const ss::ConfigView& v) { return v.flag(kAmx); });
    space.add_constraint("amx: KC a multiple of 32 (AMX's steps of depth)", [](const ss::ConfigView& v) {
      return !v.flag(kAmx) || v.split_factor(kTileKc, 1) % 32 == 0;
    });
  }
  void set_type_defaults(const ss::ConfigSpace& space, ss::Config& config, const DeviceInfo& device) const override {
    if (has_amx(device)) config.options[space.knob_index(kAmx)] = 1;  // BoolKnob: option 1 is true
  }
  // On AMX tiles: the kernel's rule (gemm_bf16_config_error): 16 or 32 rows, at most 8 tiles; else the vectors'.
  bool micro_tile_fits(const ss::ConfigView& v, const DeviceInfo& device) const override {
    if (amx(v)) {
      const int mr = int(v.integer(kMr)), nr = int(v.integer(kNr));
      return mr % 16 == 0 && nr <= 48 && cpu::gemm_bf16_amx_tiles(mr, nr) <= 8;
    }
    return v.integer(kMr) <= 14 && DotGemmTemplate::micro_tile_fits(v, device);
  }
  std::string type_fields(const ss::ConfigView& v) const override { return amx(v) ? ", .amx = true" : ""; }
  double packed_bytes(const DeviceInfo& /*device*/) const override { return 2; }
  bool reads_a_in_place(const Workload& workload, const DeviceInfo& /*device*/) const override {
    return gemm_shape(workload).K % 2 == 0;  // a pair of K is 4 bytes of a row as it lies
  }
  DotOperandTypes operand_types(const search_space::ConfigView& /*view*/) const override {
    const std::string bf16 = cpu_element_type(DataType::kBF16);
    return {bf16, bf16, bf16};
  }
};

}  // namespace

const KernelTemplate& cpu_gemm_bf16_template() {
  static const CpuBf16Template kernel_template(Op::kGemm);
  return kernel_template;
}

const KernelTemplate& cpu_conv2d_bf16_template() {
  static const CpuBf16Template kernel_template(Op::kConv2d);
  return kernel_template;
}

}  // namespace optune::kernels
