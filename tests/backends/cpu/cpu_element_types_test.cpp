// The integer half conversions of element_types.hpp (what kernels use under a compiler without a
// half type, Clang 14 on x86-64) agree bit for bit with GCC's _Float16 on every half and on floats
// across the range, ties and the edges of overflow and underflow included.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "optune/kernels/cpu/element_types.hpp"

namespace optune::kernels::cpu {
namespace {

bool is_nan_half(std::uint16_t bits) { return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0; }

TEST(ElementTypes, IntegerHalfToFloatMatchesTheCompilersOnEveryHalf) {
  for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    const float expected = static_cast<float>(std::bit_cast<_Float16>(half));
    const float got = half_bits_to_float(half);
    if (std::isnan(expected)) EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
    else EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(expected)) << std::hex << bits;
  }
}

TEST(ElementTypes, IntegerFloatToHalfRoundsAsTheCompilerDoes) {
  std::vector<float> values = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e10f,
                               std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
                               std::ldexp(3.0f, -26), 1.0f + std::ldexp(1.0f, -11), 1.0f + std::ldexp(3.0f, -11),
                               INFINITY, -INFINITY, NAN};
  // Every half and the points halfway between neighbours (the ties), and random floats of every exponent.
  for (std::uint32_t bits = 0; bits < 0x7c00u; ++bits) {
    const float low = half_bits_to_float(static_cast<std::uint16_t>(bits));
    const float high = half_bits_to_float(static_cast<std::uint16_t>(bits + 1));
    values.insert(values.end(), {low, -low, (low + high) / 2, -(low + high) / 2});
  }
  std::mt19937 random(7);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 200000; ++i) values.push_back(std::bit_cast<float>(any(random)));
  for (float value : values) {
    const auto expected = std::bit_cast<std::uint16_t>(static_cast<_Float16>(value));
    const std::uint16_t got = float_to_half_bits(value);
    if (is_nan_half(expected)) EXPECT_TRUE(is_nan_half(got)) << value;
    else EXPECT_EQ(got, expected) << value << " (float bits " << std::hex << std::bit_cast<std::uint32_t>(value) << ")";
  }
}

}  // namespace
}  // namespace optune::kernels::cpu
