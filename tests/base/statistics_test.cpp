#include "results/statistics.h"

#include <cmath>

#include <gtest/gtest.h>

namespace gpubench {
namespace {

TEST(Statistics, SummaryOfKnownValues) {
  const Summary s = summarize({4, 1, 3, 2, 5});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.p5, 1.2);   // numpy.percentile([1..5], 5)
  EXPECT_DOUBLE_EQ(s.p95, 4.8);  // numpy.percentile([1..5], 95)
  EXPECT_NEAR(s.stdev, 1.5811388300841898, 1e-12);
}

TEST(Statistics, MedianOfEvenCountInterpolates) {
  EXPECT_DOUBLE_EQ(median({1, 2, 3, 10}), 2.5);
}

TEST(Statistics, EmptyInputGivesZeros) {
  const Summary s = summarize({});
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.stdev, 0);
}

TEST(Statistics, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.95, 8), 1.8595, 1e-4);  // t tables, one tail 0.05, 8 dof
  EXPECT_NEAR(student_t_quantile(0.80, 8), 0.8889, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.5, 3.3), 0.0, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.05, 8), -1.8595, 1e-4);
}

// By hand: 5 trials a side with a stdev of 10 each: Welch's dof is exactly 2 x (5 - 1) = 8, so
// the smallest drop in means a one-sided test at alpha 0.05 finds 80 % of the time is
// (t[0.95, 8] + t[0.80, 8]) x sqrt(10^2 / 5 + 10^2 / 5) = (1.8595 + 0.8889) x 6.3246 = 17.382.
TEST(Statistics, DetectableDifferenceIsTheHandComputedPowerCalculation) {
  EXPECT_NEAR(detectable_difference({10, 5}, {10, 5}, 0.05, 0.8), 17.382, 2e-3);
  EXPECT_TRUE(std::isnan(detectable_difference({10, 1}, {10, 5}, 0.05, 0.8)));
  EXPECT_EQ(detectable_difference({0, 3}, {0, 3}, 0.05, 0.8), 0);
  // More trials see less: 5 a side are enough for 17.5, 6 are needed for 17.3.
  EXPECT_EQ(trials_to_detect(17.5, 10, 10, 0.05, 0.8), 5u);
  EXPECT_EQ(trials_to_detect(17.3, 10, 10, 0.05, 0.8), 6u);
  EXPECT_EQ(trials_to_detect(0.001, 10, 10, 0.05, 0.8), 0u);  // not within 1000
}

TEST(Statistics, TwoSidedWelchIsTwiceTheSmallerOneSidedP) {
  const std::vector<double> a = {10, 11, 12}, b = {12, 13, 14};
  EXPECT_NEAR(welch_t_test_two_sided(a, b), 2 * welch_t_test_greater(b, a).p_value, 1e-12);
  EXPECT_NEAR(welch_t_test_two_sided(a, a), 1.0, 1e-12);
}

}  // namespace
}  // namespace gpubench
