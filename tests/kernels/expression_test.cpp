// Expressions of kernel files: the language expression.hpp promises (arithmetic, floored %,
// logic, comparisons, the added functions), integer and condition evaluation, and its errors.
#include "optune/kernels/expression.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

namespace optune::kernels {
namespace {

double value_of(const std::string& text, const std::vector<std::string>& names = {}, std::vector<double> values = {}) {
  return Expression(text, names).evaluate(values);
}

std::string parse_error(const std::string& text, const std::vector<std::string>& names = {"N", "TILE"}) {
  try {
    Expression expression(text, names);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(Expression, ComputesArithmeticWithUsualPrecedence) {
  EXPECT_EQ(value_of("2 + 3 * 4"), 14);
  EXPECT_EQ(value_of("(2 + 3) * 4"), 20);
  EXPECT_EQ(value_of("2 ^ 10"), 1024);
  EXPECT_EQ(value_of("10 - 4 - 3"), 3);
  EXPECT_EQ(value_of("-3 + 5"), 2);
  EXPECT_EQ(value_of("1e6"), 1000000);
}

TEST(Expression, DividesExactly) {
  EXPECT_EQ(value_of("7 / 2"), 3.5);
  EXPECT_EQ(value_of("div(7, 2)"), 3);
  EXPECT_EQ(value_of("ceil_div(7, 2)"), 4);
  EXPECT_EQ(value_of("ceil_div(8, 2)"), 4);
  EXPECT_EQ(value_of("floor(2.5) + ceil(2.5)"), 5);
}

TEST(Expression, ModuloIsFlooredAsInPython) {
  EXPECT_EQ(value_of("7 % 3"), 1);
  EXPECT_EQ(value_of("-7 % 3"), 2);
  EXPECT_EQ(value_of("7 % -3"), -2);
  EXPECT_EQ(value_of("4096 % 64"), 0);
  EXPECT_EQ(value_of("2 * 3 % 4"), 2);  // same precedence as *, left to right
  EXPECT_TRUE(std::isnan(value_of("3 % 0")));
}

TEST(Expression, ComparesAndCombinesLogically) {
  EXPECT_EQ(value_of("3 <= 3"), 1);
  EXPECT_EQ(value_of("3 < 3"), 0);
  EXPECT_EQ(value_of("4 >= 5"), 0);
  EXPECT_EQ(value_of("4 > 3"), 1);
  EXPECT_EQ(value_of("2 == 2"), 1);
  EXPECT_EQ(value_of("2 != 2"), 0);
  EXPECT_EQ(value_of("1 && 0"), 0);
  EXPECT_EQ(value_of("0 || 2"), 1);
  EXPECT_EQ(value_of("!0"), 1);
  EXPECT_EQ(value_of("!(2 > 1)"), 0);
  EXPECT_EQ(value_of("1 < 2 && 3 < 2 || 5 == 5"), 1);  // && binds tighter than ||
  EXPECT_EQ(value_of("min(4, 2, 8) + max(1, 9)"), 11);
  EXPECT_EQ(value_of("5 > 3 ? 10 : 20"), 10);
}

TEST(Expression, EvaluatesNamesWithTheValuesGivenInOrder) {
  const Expression rule("TILE % WPT == 0 && TILE * TILE / WPT <= max_work_group_size",
                        {"N", "TILE", "WPT", "max_work_group_size"});
  EXPECT_EQ(rule.used_names(), (std::vector<std::string>{"TILE", "WPT", "max_work_group_size"}));
  EXPECT_TRUE(rule.uses("WPT"));
  EXPECT_FALSE(rule.uses("N"));
  EXPECT_TRUE(rule.evaluate_condition(std::vector<double>{4096, 32, 4, 1024}));
  EXPECT_FALSE(rule.evaluate_condition(std::vector<double>{4096, 64, 2, 1024}));  // 2048 work-items
  EXPECT_FALSE(rule.evaluate_condition(std::vector<double>{4096, 8, 3, 1024}));   // 8 % 3
  EXPECT_EQ(rule.text(), "TILE % WPT == 0 && TILE * TILE / WPT <= max_work_group_size");
}

TEST(Expression, GivesIntegersOnlyWhenTheValueIsOne) {
  const Expression size("N / WPT", {"N", "WPT"});
  EXPECT_EQ(size.evaluate_integer(std::vector<double>{4096, 4}), 1024);
  try {
    size.evaluate_integer(std::vector<double>{1025, 2});
    FAIL() << "512.5 passed as an integer";
  } catch (const std::domain_error& error) {
    EXPECT_STREQ(error.what(), "\"N / WPT\" is 512.5, not an integer");
  }
  EXPECT_THROW(size.evaluate_integer(std::vector<double>{1, 0}), std::domain_error);     // inf
  EXPECT_THROW(Expression("N % 0", {"N"}).evaluate_integer(std::vector<double>{3}), std::domain_error);  // NaN
  EXPECT_THROW(Expression("2 ^ 60", {}).evaluate_integer({}), std::domain_error);        // past 2^53
  EXPECT_EQ(Expression("2 ^ 53", {}).evaluate_integer({}), std::int64_t{1} << 53);
}

TEST(Expression, ConditionThatDividesByZeroIsFalse) {
  EXPECT_FALSE(Expression("N % WPT == 0", {"N", "WPT"}).evaluate_condition(std::vector<double>{8, 0}));
  EXPECT_TRUE(Expression("N % WPT == 0", {"N", "WPT"}).evaluate_condition(std::vector<double>{8, 4}));
}

TEST(Expression, NamesAnUnknownName) {
  EXPECT_EQ(parse_error("TIL % 4 == 0"), "unknown name 'TIL' in \"TIL % 4 == 0\"");
  EXPECT_EQ(parse_error("n * 2"), "unknown name 'n' in \"n * 2\"");  // names are case-sensitive
}

TEST(Expression, RejectsMalformedText) {
  EXPECT_NE(parse_error("N *").find("cannot parse \"N *\""), std::string::npos);
  EXPECT_NE(parse_error("(N").find("cannot parse"), std::string::npos);
  EXPECT_NE(parse_error("N 2").find("cannot parse"), std::string::npos);
  EXPECT_EQ(parse_error(""), "empty expression");
  EXPECT_EQ(parse_error("  "), "empty expression");
  EXPECT_NE(parse_error("N, TILE").find("one value expected"), std::string::npos);
  EXPECT_NE(parse_error("\"text\"").find("cannot parse"), std::string::npos);
}

TEST(Expression, RefusesAssignment) {
  EXPECT_EQ(parse_error("N = 3"), "cannot parse \"N = 3\": '=' assigns; compare with '=='");
  EXPECT_NE(parse_error("N += 3").find("'=' assigns"), std::string::npos);
  EXPECT_EQ(value_of("N == 3", {"N"}, {3}), 1);
}

TEST(Expression, RejectsBadNameLists) {
  EXPECT_THROW(Expression("1", {"N", "N"}), std::invalid_argument);
  EXPECT_THROW(Expression("1", {"min"}), std::invalid_argument);  // a function's name
  EXPECT_THROW(Expression("1", {"_x"}), std::invalid_argument);   // muparser's constants start with _
  EXPECT_THROW(Expression("1", {"2N"}), std::invalid_argument);
  EXPECT_TRUE(is_expression_name("TILE_M"));
  EXPECT_FALSE(is_expression_name("ceil_div"));
  EXPECT_FALSE(is_expression_name("a-b"));
}

TEST(Expression, RejectsAWrongNumberOfValues) {
  const Expression expression("N + M", {"N", "M"});
  EXPECT_THROW(expression.evaluate(std::vector<double>{1}), std::invalid_argument);
}

// The space's constraints may be evaluated from several threads; copies share one parser.
TEST(Expression, EvaluatesFromSeveralThreadsAtOnce) {
  const Expression product("N * M + 1", {"N", "M"});
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([copy = product, t, &wrong] {
      for (int i = 0; i < 20000; ++i) {
        const double n = t + 1, m = i;
        if (copy.evaluate(std::vector<double>{n, m}) != n * m + 1) ++wrong[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace optune::kernels
