// The one operand model's type layer: the size table, bf16 and f16 conversions, unit roundoff,
// dtypes in shapes and keys, what a dtype makes of each operand, and the check's tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "optune/kernels/data_type.hpp"
#include "optune/kernels/reference.hpp"
#include "optune/kernels/workload.hpp"

namespace optune::kernels {
namespace {

TEST(DataType, EveryNameParsesBackWithItsSize) {
  for (const char* name : {"f16", "bf16", "f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "e4m3"}) {
    const DataType type = parse_data_type(name);
    EXPECT_EQ(data_type_name(type), name);
    const std::size_t bytes = data_type_bytes(type);
    EXPECT_TRUE(bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) << name;
  }
  EXPECT_EQ(data_type_bytes(DataType::kBF16), 2u);
  EXPECT_TRUE(is_floating(DataType::kBF16));
  EXPECT_THROW(parse_data_type("fp8"), std::invalid_argument);
}

TEST(DataType, Bfloat16RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(bfloat16_to_float(float_to_bfloat16(std::numeric_limits<float>::max()))));
  for (float value : {0.1f, -3.75f, 1e-20f, 65504.0f}) {
    const float back = bfloat16_to_float(float_to_bfloat16(value));
    EXPECT_LE(std::fabs(back - value), unit_roundoff(DataType::kBF16) * std::fabs(value)) << value;
  }
}

// Every E4M3 code but NaN's decodes to a value that encodes back to it; values between two codes
// go to the nearer (ties to the even code); beyond 448 saturates.
TEST(DataType, E4m3RoundTripsEveryCodeRoundsToNearestEvenAndSaturates) {
  for (int code = 0; code < 256; ++code) {
    const float value = e4m3_to_float(std::uint8_t(code));
    if ((code & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(value)) << code;
      continue;
    }
    EXPECT_EQ(float_to_e4m3(value), code) << code << " " << value;
  }
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));  // the smallest subnormal
  EXPECT_EQ(e4m3_to_float(0x08), std::ldexp(1.0f, -6));  // the smallest normal
  // 1 + 1/16 is halfway between 1 (0x38) and 1.125 (0x39): to the even code; 1.1875 between
  // 1.125 and 1.25 (0x3a): to 0x3a.
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3a);
  EXPECT_EQ(float_to_e4m3(1.07f), 0x39);
  EXPECT_EQ(float_to_e4m3(1.5f * std::ldexp(1.0f, -9)), 0x02);  // a subnormal tie: to even (2 units)
  EXPECT_EQ(float_to_e4m3(1e9f), 0x7e);
  EXPECT_EQ(float_to_e4m3(-470.0f), 0xfe);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()) & 0x7f, 0x7f);
  EXPECT_EQ(float_to_e4m3(1e-4f), 0x00);  // below half the smallest subnormal
  for (float value : {0.1f, -3.75f, 0.02f, 300.0f}) {
    const float back = e4m3_to_float(float_to_e4m3(value));
    EXPECT_LE(std::fabs(back - value), unit_roundoff(DataType::kE4M3) * std::fabs(value)) << value;
  }
}

TEST(DataType, StoredElementsReadBackInEveryType) {
  std::vector<std::byte> bytes(16);
  for (DataType type : {DataType::kF16, DataType::kBF16, DataType::kF32, DataType::kI8, DataType::kU8, DataType::kI32,
                        DataType::kE4M3}) {
    store_element(type, bytes.data(), 1, 3.0);
    EXPECT_EQ(load_element(type, bytes.data(), 1), 3.0) << data_type_name(type);
  }
  store_element(DataType::kI8, bytes.data(), 0, -128.0);
  EXPECT_EQ(load_element(DataType::kI8, bytes.data(), 0), -128.0);
  EXPECT_EQ(unit_roundoff(DataType::kF16), std::ldexp(1.0, -11));
  EXPECT_EQ(unit_roundoff(DataType::kBF16), std::ldexp(1.0, -8));
  EXPECT_EQ(unit_roundoff(DataType::kI8), 0.0);
}

// Many elements at once: what one at a time gives, in every type, NaN included.
TEST(DataType, ElementsFilledAndLoadedInBulkMatchOneAtATime) {
  for (DataType type : {DataType::kF16, DataType::kBF16, DataType::kF32, DataType::kF64, DataType::kI8,
                        DataType::kI32}) {
    std::vector<std::byte> bytes(37 * data_type_bytes(type));
    for (std::size_t i = 0; i < 37; ++i) store_element(type, bytes.data(), i, double(i % 7) - 3.0);
    std::vector<double> loaded(30);
    load_elements(type, bytes.data(), 5, 30, loaded.data());
    for (std::size_t i = 0; i < 30; ++i) EXPECT_EQ(loaded[i], load_element(type, bytes.data(), 5 + i)) << data_type_name(type);
    fill_elements(type, bytes.data(), 37, -2.0);
    for (std::size_t i = 0; i < 37; ++i) EXPECT_EQ(load_element(type, bytes.data(), i), -2.0) << data_type_name(type);
  }
  std::vector<std::byte> halves(11 * 2);
  fill_elements(DataType::kBF16, halves.data(), 11, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> loaded(11);
  load_elements(DataType::kBF16, halves.data(), 0, 11, loaded.data());
  for (double value : loaded) EXPECT_TRUE(std::isnan(value));
}

TEST(WorkloadDtype, ShapesNameTheDtypeAndKeysCarryIt) {
  const Workload named = parse_workload(Op::kGemm, "M=64,N=32,K=16,dtype=bf16");
  EXPECT_EQ(named.dtype, DataType::kBF16);
  EXPECT_EQ(named.key(), "gemm.bf16.M64.N32.K16");
  EXPECT_EQ(parse_workload_key(named.key()), named);
  const Workload positional = parse_workload(Op::kGemm, "64,32,16,dtype=i8");
  EXPECT_EQ(positional.key(), "gemm.i8.M64.N32.K16");
  EXPECT_EQ(parse_workload(Op::kGemm, "64,32,16", DataType::kF16).key(), "gemm.f16.M64.N32.K16");
  EXPECT_EQ(parse_workload(Op::kConv2d, "N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1,dtype=bf16").key(),
            "conv2d.nchw.bf16.N1.C8.H8.W8.K8.R3.S3.st1.pad1.dil1.g1");
  EXPECT_EQ(parse_workload(Op::kGemm, "64,32,16").dtype, DataType::kF32);
}

TEST(WorkloadDtype, BadDtypesAndOverflowingIntegerSumsAreRefused) {
  EXPECT_THROW(parse_workload(Op::kGemm, "M=64,N=32,K=16,dtype=fp4"), std::invalid_argument);
  EXPECT_THROW(parse_workload(Op::kGemm, "M=64,N=32,K=16,dtype=bf16,dtype=f16"), std::invalid_argument);
  EXPECT_THROW(parse_workload(Op::kGemm, "M=64,N=32,K=16,dtype=bf16", DataType::kF16), std::invalid_argument);
  EXPECT_THROW(parse_workload(Op::kGemm, "64,32,M=16"), std::invalid_argument);
  EXPECT_THROW(parse_workload_key("gemm.q4.M64.N32.K16"), std::invalid_argument);
  // 255 * 128 * K must stay below 2^31: K = 65794 could overflow an int32 accumulator.
  EXPECT_NO_THROW(parse_workload(Op::kGemm, "1,1,65793,dtype=i8"));
  EXPECT_THROW(parse_workload(Op::kGemm, "1,1,65794,dtype=i8"), std::invalid_argument);
}

TEST(OperatorOperands, TheDtypeGivesEachOperandItsType) {
  const Workload bf16 = parse_workload(Op::kGemm, "M=4,N=3,K=2,dtype=bf16");
  const auto operands = operator_operands(bf16);
  ASSERT_EQ(operands.size(), 3u);
  EXPECT_EQ(operands[0].name, "A");
  EXPECT_EQ(operands[0].count, 8u);
  EXPECT_EQ(operands[2].count, 12u);
  for (const auto& operand : operands) EXPECT_EQ(operand.dtype, DataType::kBF16) << operand.name;
  EXPECT_TRUE(operands[2].is_output);

  const Workload i8 = parse_workload(Op::kGemm, "M=4,N=3,K=2,dtype=i8");
  const auto integer = operator_operands(i8, {DataType::kU8, DataType::kI8});
  EXPECT_EQ(integer[0].dtype, DataType::kU8);
  EXPECT_EQ(integer[1].dtype, DataType::kI8);
  EXPECT_EQ(integer[2].dtype, DataType::kI32);
  EXPECT_THROW(operator_operands(i8, {DataType::kU8}), std::invalid_argument);
}

// fp8 GEMM as torch._scaled_mm: e4m3 matrices (B as N x K), two float32 scales, a bf16 output.
TEST(OperatorOperands, E4m3GemmTakesBByRowsOfKAndTwoFloatScales) {
  const Workload fp8 = parse_workload(Op::kGemm, "M=4,N=3,K=2,dtype=e4m3");
  EXPECT_EQ(fp8.key(), "gemm.e4m3.M4.N3.K2");
  const auto operands = operator_operands(fp8);
  ASSERT_EQ(operands.size(), 5u);
  const std::vector<std::string> names = {"A", "B", "scale_a", "scale_b", "C"};
  const std::vector<DataType> types = {DataType::kE4M3, DataType::kE4M3, DataType::kF32, DataType::kF32,
                                       DataType::kBF16};
  const std::vector<std::size_t> counts = {8, 6, 1, 1, 12};
  for (std::size_t i = 0; i < operands.size(); ++i) {
    EXPECT_EQ(operands[i].name, names[i]);
    EXPECT_EQ(operands[i].dtype, types[i]) << names[i];
    EXPECT_EQ(operands[i].count, counts[i]) << names[i];
  }
  // C = 0.5 * -2 * A * B^T, B's rows the columns of the product.
  const std::vector<double> a = {1, 2, 3, 4}, b = {1, 0, 0, 1, 1, 1}, scale_a = {0.5}, scale_b = {-2};
  const Workload small = parse_workload(Op::kGemm, "M=2,N=3,K=2,dtype=e4m3");
  std::vector<double> c(6);
  reference(small, {a.data(), b.data(), scale_a.data(), scale_b.data()}, c.data());
  EXPECT_EQ(c, (std::vector<double>{-1, -2, -3, -3, -4, -7}));
  EXPECT_DOUBLE_EQ(check_tolerance(small, output_dtype(DataType::kE4M3), 1e-4),
                   2 * std::ldexp(1.0, -8) + 2 * std::ldexp(1.0, -24));
}

TEST(CheckTolerance, FollowsTheTypeAndTheReductionLength) {
  const Workload f32 = parse_workload(Op::kGemm, "M=4,N=4,K=4096");
  EXPECT_EQ(check_tolerance(f32, DataType::kF32, 1e-4), 1e-4);
  const Workload bf16 = parse_workload(Op::kGemm, "M=4,N=4,K=4096,dtype=bf16");
  EXPECT_DOUBLE_EQ(check_tolerance(bf16, DataType::kBF16, 1e-4),
                   2 * std::ldexp(1.0, -8) + 4096 * std::ldexp(1.0, -24));
  const Workload conv = parse_workload(Op::kConv2d, "N=1,C=64,H=8,W=8,K=8,R=3,S=3,dtype=f16");
  EXPECT_DOUBLE_EQ(check_tolerance(conv, DataType::kF16, 1e-4),
                   2 * std::ldexp(1.0, -11) + 64 * 9 * std::ldexp(1.0, -24));
  EXPECT_EQ(check_tolerance(parse_workload(Op::kGemm, "4,4,4,dtype=i8"), DataType::kI32, 1e-4), 0.0);
}

TEST(Reference, IntegerGemmIsExactInDouble) {
  const Workload i8 = parse_workload(Op::kGemm, "M=2,N=2,K=3,dtype=i8");
  const std::vector<double> a = {255, 0, 17, 1, 2, 3}, b = {-128, 127, -128, 127, 5, -6};
  std::vector<double> c(4);
  reference(i8, {a.data(), b.data()}, c.data());
  EXPECT_EQ(c[0], 255.0 * -128 + 0 * -128 + 17 * 5);
  EXPECT_EQ(c[3], 1.0 * 127 + 2 * 127 + 3 * -6);
}

}  // namespace
}  // namespace optune::kernels
