// The worker's typed operands of a built-in operator: inputs over their type's range, a guard
// after every buffer, the reference in double from those very inputs, and the output check.
#include <gtest/gtest.h>

#include <cmath>

#include "optune/kernels/reference.hpp"
#include "optune/measure/worker_operands.hpp"

namespace optune::measure {
namespace {

using kernels::DataType;

// C = A * B computed from the operands' own bytes, in the output's type.
void write_product(Operands& operands, std::int64_t M, std::int64_t N, std::int64_t K) {
  const auto& a = operands.values.args[0];
  const auto& b = operands.values.args[1];
  auto& c = operands.values.args[2];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < K; ++p)
        sum += kernels::load_element(a.spec.dtype, a.initial.data(), i * K + p) *
               kernels::load_element(b.spec.dtype, b.initial.data(), p * N + j);
      kernels::store_element(c.spec.dtype, c.bytes.data(), i * N + j, sum);
    }
}

TEST(WorkerOperands, IntegerGemmOperandsSpanTheirTypesAndCheckExactly) {
  Operands operands;
  prepare_operator_operands(operands, "gemm.i8.M16.N8.K64", 7, {DataType::kU8, DataType::kI8});
  ASSERT_EQ(operands.values.args.size(), 3u);
  const auto& a = operands.values.args[0];
  const auto& b = operands.values.args[1];
  EXPECT_EQ(a.spec.dtype, DataType::kU8);
  EXPECT_EQ(b.spec.dtype, DataType::kI8);
  EXPECT_EQ(operands.values.args[2].spec.dtype, DataType::kI32);
  EXPECT_EQ(a.initial.size(), 16u * 64u);
  double low = 0, high = 0;
  for (std::size_t i = 0; i < 8 * 64; ++i) {
    low = std::min(low, kernels::load_element(DataType::kI8, b.initial.data(), i));
    high = std::max(high, kernels::load_element(DataType::kI8, b.initial.data(), i));
  }
  EXPECT_LT(low, -100);  // the signed range, not [0, 100)
  EXPECT_GT(high, 100);

  reset_for_run(operands.values, 0);
  EXPECT_GT(operator_output_error(operands), 1.0);  // poisoned (0xA5 bytes), unwritten
  write_product(operands, 16, 8, 64);
  EXPECT_EQ(operator_output_error(operands), 0.0);
  // One unit off in one element of an exact type is wrong.
  auto& c = operands.values.args[2];
  kernels::store_element(DataType::kI32, c.bytes.data(), 5, kernels::load_element(DataType::kI32, c.bytes.data(), 5) + 1);
  EXPECT_GT(operator_output_error(operands), 0.0);
}

// fp8: e4m3 matrices, B by rows of K, two float scales, a bf16 output: the product with B
// transposed and scaled passes the check, the one that reads B as K x N does not.
TEST(WorkerOperands, Fp8GemmChecksTheScaledProductWithBTransposed) {
  constexpr std::int64_t M = 16, N = 8, K = 64;
  Operands operands;
  prepare_operator_operands(operands, "gemm.e4m3.M16.N8.K64", 5, {});
  auto& args = operands.values.args;
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(args[1].spec.dtype, DataType::kE4M3);
  EXPECT_EQ(args[2].spec.dtype, DataType::kF32);
  EXPECT_EQ(args[4].spec.dtype, DataType::kBF16);
  const double scale = kernels::load_element(DataType::kF32, args[2].initial.data(), 0) *
                       kernels::load_element(DataType::kF32, args[3].initial.data(), 0);
  auto product = [&](bool transposed) {
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < K; ++p)
          sum += kernels::load_element(DataType::kE4M3, args[0].initial.data(), i * K + p) *
                 kernels::load_element(DataType::kE4M3, args[1].initial.data(), transposed ? j * K + p : p * N + j);
        kernels::store_element(DataType::kBF16, args[4].bytes.data(), i * N + j, scale * sum);
      }
  };
  const kernels::Workload workload = kernels::parse_workload_key("gemm.e4m3.M16.N8.K64");
  const double tolerance = kernels::check_tolerance(workload, DataType::kBF16, 1e-4);
  reset_for_run(operands.values, 0);
  product(true);
  EXPECT_LE(operator_output_error(operands), tolerance);
  product(false);
  EXPECT_GT(operator_output_error(operands), 0.5);
}

TEST(WorkerOperands, Bfloat16OutputWithinItsToleranceAndAWriteBeyondItIsCaught) {
  Operands operands;
  prepare_operator_operands(operands, "gemm.bf16.M8.N8.K32", 3, {});
  for (const auto& arg : operands.values.args) EXPECT_EQ(arg.spec.dtype, DataType::kBF16);
  reset_for_run(operands.values, 0);
  write_product(operands, 8, 8, 32);
  const double error = operator_output_error(operands);
  const auto workload = kernels::parse_workload_key("gemm.bf16.M8.N8.K32");
  EXPECT_GT(error, 0.0);  // rounded to bf16
  EXPECT_LE(error, kernels::check_tolerance(workload, DataType::kBF16, 1e-4));
  auto& c = operands.values.args[2];
  c.bytes[c.size()] = std::byte{0};  // one byte past the output
  EXPECT_TRUE(std::isinf(operator_output_error(operands)));
}

// An output of millions of elements is compared in shares, one a thread: the right product is
// exact, and one element wrong or NaN in the last share is caught as in the first. (The reference
// is the exact int32 product, so the output is written from it.)
TEST(WorkerOperands, ALargeOutputComparedInSharesCatchesOneWrongElementAnywhere) {
  Operands operands;
  prepare_operator_operands(operands, "gemm.i8.M2048.N2048.K4", 5, {DataType::kU8, DataType::kI8});
  reset_for_run(operands.values, 0);
  auto& c = operands.values.args[2];
  const auto count = static_cast<std::size_t>(c.spec.count);
  ASSERT_EQ(count, std::size_t{1} << 22);
  for (std::size_t i = 0; i < count; ++i) kernels::store_element(DataType::kI32, c.bytes.data(), i, operands.reference[i]);
  EXPECT_EQ(operator_output_error(operands), 0.0);
  for (std::size_t wrong : {std::size_t{0}, count / 2 + 1, count - 1}) {
    const double right = kernels::load_element(DataType::kI32, c.bytes.data(), wrong);
    kernels::store_element(DataType::kI32, c.bytes.data(), wrong, right + 1);
    EXPECT_GT(operator_output_error(operands), 0.0) << wrong;
    kernels::store_element(DataType::kI32, c.bytes.data(), wrong, right);
  }
  EXPECT_EQ(operator_output_error(operands), 0.0);
  Operands floats;
  prepare_operator_operands(floats, "gemm.f32.M2048.N2048.K4", 5, {});
  reset_for_run(floats.values, 0);
  auto& f = floats.values.args[2];
  for (std::size_t i = 0; i < count; ++i) kernels::store_element(DataType::kF32, f.bytes.data(), i, floats.reference[i]);
  EXPECT_LT(operator_output_error(floats), 1e-6);
  kernels::store_element(DataType::kF32, f.bytes.data(), count - 1, std::nan(""));
  EXPECT_TRUE(std::isinf(operator_output_error(floats)));
}

// Every buffer a candidate receives starts on a cache line, as an application's tensors do (a
// kernel reading rows in place is timed as it will run there), large ones included (malloc gives
// those 16 bytes past a page).
TEST(WorkerOperands, EveryBufferStartsOnACacheLine) {
  const std::vector<DataType> u8s8{DataType::kU8, DataType::kI8};
  for (const auto& [key, inputs] : std::vector<std::pair<const char*, std::vector<DataType>>>{
           {"gemm.i8.M196.N256.K2304", u8s8}, {"gemm.bf16.M3.N5.K7", {}}, {"conv2d.nchw.f32.N1.C3.H9.W9.K4.R3.S3.st1.pad1.dil1.g1", {}}}) {
    Operands operands;
    prepare_operator_operands(operands, key, 3, inputs);
    reset_for_run(operands.values, 0);
    for (void* pointer : argument_pointers(operands.values))
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pointer) % kCacheLineBytes, 0u) << key;
  }
}

TEST(WorkerOperands, MadeOncePerKeySeedAndTypes) {
  Operands operands;
  prepare_operator_operands(operands, "gemm.f32.M4.N4.K4", 1, {});
  const std::string id = operands.values.id;
  const std::vector<double> reference = operands.reference;
  prepare_operator_operands(operands, "gemm.f32.M4.N4.K4", 1, {});
  EXPECT_EQ(operands.values.id, id);
  prepare_operator_operands(operands, "gemm.f32.M4.N4.K4", 2, {});
  EXPECT_NE(operands.reference, reference);
  EXPECT_THROW(prepare_operator_operands(operands, "gemm.i8.M4.N4.K4", 1, {DataType::kU8}), std::invalid_argument);
}

}  // namespace
}  // namespace optune::measure
