// The "gemm_int8.cpu" template: i8 GEMM workloads (int32 accumulation and output) on the
// header-only kernel optune/kernels/cpu/gemm_int8.hpp. On x86 it reads activations as u8 (what
// VNNI's vpdpbusd multiplies, and oneDNN's u8s8s32 matmul takes), elsewhere as s8; weights are s8.
// The knobs map one to one onto GemmInt8Config's fields (dot_gemm_template.hpp).
#include "dot_gemm_template.hpp"
#include "templates.hpp"

namespace optune::kernels {
namespace {

namespace ss = search_space;

// The activations' signedness, one option per device (u8 on x86, s8 elsewhere): every record says
// which ran.
constexpr const char* kActivations = "activations";

bool is_x86(const DeviceInfo& device) { return device.arch == "x86_64" || device.has_isa("avx2"); }

// Whether candidates compile to gemm_int8.hpp's VNNI path (u8 activations, as x86 runs them, and
// vpdpbusd on zmm registers): micro-tiles are then whole 16-lane int32 vectors, 32 registers deep.
bool runs_vnni(const DeviceInfo& device) {
  return is_x86(device) && device.has_isa("avx512_vnni") && device.has_isa("avx512bw");
}

class CpuGemmInt8Template final : public DotGemmTemplate {
 public:
  std::string name() const override { return "gemm_int8.cpu"; }
  std::vector<DataType> dtypes() const override { return {DataType::kI8}; }

  std::vector<DataType> input_dtypes(const Workload& /*workload*/, const DeviceInfo& device) const override {
    return {is_x86(device) ? DataType::kU8 : DataType::kI8, DataType::kI8};
  }

 protected:
  DotGemmKernel kernel() const override { return {"gemm_int8.hpp", "gemm_int8", "GemmInt8Config"}; }
  // gemm_int8_lanes() in the header: int32 lanes of a zmm on the VNNI path, of a ymm elsewhere.
  int lanes(const DeviceInfo& device) const override { return runs_vnni(device) ? 16 : 8; }
  int max_mr(const DeviceInfo& device) const override { return runs_vnni(device) ? 14 : 12; }
  // Bytes per packed element: as they are with VNNI, widened to int16 pairs elsewhere.
  double packed_bytes(const DeviceInfo& device) const override { return runs_vnni(device) ? 1 : 2; }
  // VNNI's quads are 4 bytes of a row as they lie; the pair path widens A as it packs it.
  bool reads_a_in_place(const Workload& workload, const DeviceInfo& device) const override {
    return runs_vnni(device) && workload.gemm().K % 4 == 0;
  }
  void add_type_knobs(ss::ConfigSpace& space, const DeviceInfo& device) const override {
    space.add(ss::ChoiceKnob{kActivations, {is_x86(device) ? "u8" : "s8"}});
  }
  std::vector<std::string> operand_types(const ss::ConfigView& view) const override {
    return {view.choice(kActivations) == "u8" ? "std::uint8_t" : "std::int8_t", "std::int8_t", "std::int32_t"};
  }
};

}  // namespace

const KernelTemplate& cpu_gemm_int8_template() {
  static const CpuGemmInt8Template kernel_template;
  return kernel_template;
}

}  // namespace optune::kernels
