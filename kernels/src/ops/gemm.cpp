// The catalog's entry for gemm: row-major C[M,N] = A[M,K] * B[K,N], no layout. Its `--shape` is
// "M,N,K" or "M=512,N=512,K=512"; its key "gemm.f32.M512.N512.K512". The reference goes through
// Eigen, in double while that is cheap (and always for integer dtypes, where it is exact).
// e4m3 is fp8 as torch._scaled_mm and cuBLASLt take it: C[M,N] (bf16) = scale_a * scale_b *
// A[M,K] * B[N,K]^T, B stored N x K (K contiguous, "column-major B", because Hopper's fp8 tensor
// cores read both operands K-major) and the scales two float32 inputs after the matrices.
#include <Eigen/Core>

#include <cstdint>

#include "entry_support.hpp"
#include "optune/kernels/operator_catalog.hpp"

namespace optune::kernels {
namespace {

// Up to this many multiply-adds, GEMM runs in double (about a second of Eigen on one core);
// beyond, float keeps time and memory in check at a relative error near sqrt(K) * 6e-8.
constexpr double kMaxDoubleGemmMacs = double(std::int64_t{1} << 30);

template <typename Scalar>
using RowMajor = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// C = A * B, in double where `in_double`, else in float (B a matrix or a transposed one).
template <typename BMatrix>
void multiply(const Eigen::Map<const RowMajor<double>>& A, const BMatrix& B, Eigen::Map<RowMajor<double>>& C,
              bool in_double) {
  if (in_double) {
    C.noalias() = A * B;
  } else {
    const RowMajor<float> product = A.cast<float>() * B.template cast<float>();
    C = product.cast<double>();
  }
}

class GemmEntry final : public OperatorEntry {
 public:
  Op op() const override { return Op::kGemm; }
  std::string_view name() const override { return "gemm"; }

  const std::vector<ExtentSpec>& extents() const override {
    static const std::vector<ExtentSpec> extents = {{"M", true, 0}, {"N", true, 0}, {"K", true, 0}};
    return extents;
  }
  const std::vector<KeyField>& key_fields() const override {
    static const std::vector<KeyField> fields = {{"M", "M"}, {"N", "N"}, {"K", "K"}};
    return fields;
  }
  bool takes_positional_shape() const override { return true; }
  bool has_layout() const override { return false; }

  Workload workload_from(const ExtentValues& e, std::string_view /*context*/) const override {
    Workload workload;
    workload.op = Op::kGemm;
    workload.shape = GemmShape{e.at("M"), e.at("N"), e.at("K")};
    return workload;
  }
  ExtentValues extents_of(const Workload& workload) const override {
    const auto& g = workload.gemm();
    return {{"M", g.M}, {"N", g.N}, {"K", g.K}};
  }

  void validate(const Workload& workload, std::string_view context) const override {
    if (workload.nchw_input) reject_nchw_input(workload, context);
    if (workload.layout_block != kLayoutNchw) {
      fail(context, "gemm has no layout, got " + layout_name(workload.layout_block));
    }
    if (!std::holds_alternative<GemmShape>(workload.shape)) fail(context, "gemm needs a GemmShape");
    const auto& g = workload.gemm();
    check_extent("M", g.M, context);
    check_extent("N", g.N, context);
    check_extent("K", g.K, context);
  }

  double tensor_elements(const Workload& workload) const override {
    const auto& g = workload.gemm();
    return double(g.M) * g.K + double(g.K) * g.N + double(g.M) * g.N;
  }
  double flops(const Workload& workload) const override {
    const auto& g = workload.gemm();
    return 2.0 * double(g.M) * double(g.N) * double(g.K);
  }

  std::vector<std::size_t> input_sizes(const Workload& workload) const override {
    const auto& g = workload.gemm();
    if (scaled(workload)) return {static_cast<std::size_t>(g.M * g.K), static_cast<std::size_t>(g.K * g.N), 1, 1};
    return {static_cast<std::size_t>(g.M * g.K), static_cast<std::size_t>(g.K * g.N)};
  }
  std::vector<DataType> input_dtypes(const Workload& workload) const override {
    if (scaled(workload)) return {workload.dtype, workload.dtype, DataType::kF32, DataType::kF32};
    return {workload.dtype, workload.dtype};
  }
  std::size_t output_size(const Workload& workload) const override {
    const auto& g = workload.gemm();
    return static_cast<std::size_t>(g.M * g.N);
  }
  std::vector<std::string> operand_names(const Workload& workload) const override {
    if (scaled(workload)) return {"A", "B", "scale_a", "scale_b", "C"};
    return {"A", "B", "C"};
  }
  double reduction_length(const Workload& workload) const override { return double(workload.gemm().K); }

  void reference(const Workload& workload, const std::vector<const double*>& inputs,
                 double* output) const override {
    const auto& s = workload.gemm();
    const Eigen::Map<const RowMajor<double>> A(inputs[0], s.M, s.K);
    Eigen::Map<RowMajor<double>> C(output, s.M, s.N);
    const bool in_double =
        double(s.M) * double(s.N) * double(s.K) <= kMaxDoubleGemmMacs || !is_floating(workload.dtype);
    if (scaled(workload)) {
      const Eigen::Map<const RowMajor<double>> B_by_rows(inputs[1], s.N, s.K);
      multiply(A, B_by_rows.transpose(), C, in_double);
      C *= inputs[2][0] * inputs[3][0];
      return;
    }
    multiply(A, Eigen::Map<const RowMajor<double>>(inputs[1], s.K, s.N), C, in_double);
  }

  std::vector<std::pair<std::string, float>> shape_features(const Workload& workload) const override {
    const auto& g = workload.gemm();
    return {{"shape.M", log2_extent(g.M)}, {"shape.N", log2_extent(g.N)}, {"shape.K", log2_extent(g.K)}};
  }

 private:
  // fp8 GEMM's form: B by rows of K and two scales.
  static bool scaled(const Workload& workload) { return workload.dtype == DataType::kE4M3; }
};

}  // namespace

const OperatorEntry& gemm_entry() {
  static const GemmEntry entry;
  return entry;
}

}  // namespace optune::kernels
