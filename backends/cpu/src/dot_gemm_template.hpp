// The CPU GEMM templates on dot-product micro-kernels (gemm_int8.hpp, gemm_bf16.hpp): K packed in
// small groups that one instruction multiplies and sums into each 32-bit lane of a vector
// (vpdpbusd, vpmaddwd, vdpbf16ps), GotoBLAS blocking around them. Both kernels take the same six
// numbers (GemmInt8Config, GemmBf16Config), so their knobs, rules, default and features are one
// thing; a template says what differs: its element types, the lanes of its accumulating vector on
// the device, and the bytes a packed element takes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "optune/kernels/kernel_template.hpp"

namespace optune::kernels {

struct DotGemmKernel {
  std::string header;       // "gemm_int8.hpp"
  std::string function;     // "gemm_int8"
  std::string config_type;  // "GemmInt8Config"
};

class DotGemmTemplate : public KernelTemplate {
 public:
  Op op() const override { return Op::kGemm; }
  std::string_view backend() const override { return "cpu"; }

  search_space::ConfigSpace space(const Workload& workload, const DeviceInfo& device) const override;
  // Untuned: 6-row micro-tiles of two accumulating vectors, MC 96, NC 512 and KC 512 where the shape
  // has them (else the nearest blocks that fit), all cores, A read in place
  // where it can be and each thread has at most 128 columns.
  search_space::Config default_config(const Workload& workload, const DeviceInfo& device,
                                      const search_space::ConfigSpace& space) const override;
  std::vector<std::pair<std::string, double>> derived_features(const Workload& workload, const DeviceInfo& device,
                                                               const search_space::ConfigView& view) const override;
  std::string emit_source(const Workload& workload, const DeviceInfo& device,
                          const search_space::ConfigView& view) const override;

 protected:
  virtual DotGemmKernel kernel() const = 0;
  // The 32-bit lanes of the vector the kernel accumulates in on the device: nr is a multiple.
  virtual int lanes(const DeviceInfo& device) const = 0;
  virtual int max_mr(const DeviceInfo& device) const = 0;
  // Bytes of one packed element (int8 widened to int16 pairs on AVX2 takes 2).
  virtual double packed_bytes(const DeviceInfo& device) const = 0;
  // Whether the kernel can read full row panels of A where they lie (pack_a off): its K groups are
  // consecutive elements of a row, and K is whole groups.
  virtual bool reads_a_in_place(const Workload& workload, const DeviceInfo& device) const = 0;
  // Knobs of the element types, added after the blocking knobs (records name knobs, not positions).
  virtual void add_type_knobs(search_space::ConfigSpace& /*space*/, const DeviceInfo& /*device*/) const {}
  // The C++ element types of A, B and C in a candidate's call.
  virtual std::vector<std::string> operand_types(const search_space::ConfigView& view) const = 0;
};

}  // namespace optune::kernels
