#include "results/statistics.h"

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

}  // namespace
}  // namespace gpubench
