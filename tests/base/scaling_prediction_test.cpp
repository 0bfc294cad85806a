// The arithmetic of a data-parallel prediction (features/parallelism/scaling/scaling_prediction.h)
// from a fixed timeline and a fixed measured all-reduce curve, against figures worked out by hand:
// what the CPU-rank check (scripts/check-scale-ranks.sh) relies on, without timing anything.
#include "features/parallelism/scaling/scaling_prediction.h"

#include <gtest/gtest.h>

#include "base/measured_fabric.h"

namespace gpubench {
namespace {

using testing::measured_fabric;

// A 100 ms step whose backward ends at 50 ms, with a 1 MiB bucket ready at 10 ms and a 1.5 MiB
// one at 49.5 ms.
ScaleInput fixed_input(bool overlap) {
  ScaleInput input;
  input.step_ms = 100;
  input.throughput = 20;
  input.overlap = overlap;
  input.timeline.steps = 6;
  input.timeline.forward_ms = 30;
  input.timeline.backward_ms = 50;
  input.timeline.bucket_bytes = {1 << 20, 3 << 19};
  input.timeline.bucket_ready_ms = {10, 49.5};
  return input;
}

TEST(ScalingPrediction, OverlappedAllReducesExposeOnlyWhatOutlastsBackward) {
  // Bucket 1: 1.1 ms, done at 11.1. Bucket 2: 100 us + 0.5 MiB at 1 ms a MiB = 1.6 ms, done at
  // 51.1: 1.1 ms past backward's end.
  const ScalePoint point = predict_point(fixed_input(true), 2, 8, measured_fabric());
  EXPECT_EQ(point.algorithm, "measured");
  EXPECT_DOUBLE_EQ(point.latency_ms, 0.2);
  EXPECT_DOUBLE_EQ(point.bandwidth_ms, 2.5);
  EXPECT_DOUBLE_EQ(point.communication_ms, 2.7);
  EXPECT_NEAR(point.exposed_ms, 1.1, 1e-12);
  EXPECT_NEAR(point.step_ms, 101.1, 1e-12);
  EXPECT_NEAR(point.efficiency, 100 / 101.1, 1e-12);
  EXPECT_NEAR(point.throughput, 2 * 20 * 100 / 101.1, 1e-12);
  EXPECT_EQ(point.bottleneck, "bandwidth");
}

TEST(ScalingPrediction, WithoutOverlapEveryAllReduceIsAddedToTheStep) {
  const ScalePoint point = predict_point(fixed_input(false), 2, 8, measured_fabric());
  EXPECT_DOUBLE_EQ(point.exposed_ms, 2.7);
  EXPECT_DOUBLE_EQ(point.step_ms, 102.7);
}

TEST(ScalingPrediction, AnotherWorldSizeScalesTheCurvesBandwidthPartByTheRingFactor) {
  // 4 ranks from a 2-rank curve: each rank moves 2(4-1)/4 = 1.5 times the bytes of 2(2-1)/2;
  // the latency, the smallest message's time, is kept: 0.1 + 1.5 and 0.1 + 2.25 ms.
  const ScalePoint point = predict_point(fixed_input(false), 4, 8, measured_fabric());
  EXPECT_DOUBLE_EQ(point.latency_ms, 0.2);
  EXPECT_DOUBLE_EQ(point.bandwidth_ms, 3.75);
  EXPECT_DOUBLE_EQ(point.step_ms, 103.95);
  // Past the curve's largest size its bus bandwidth holds: 4 MiB at 2.1 ms a 2 MiB.
  ScaleInput large = fixed_input(false);
  large.timeline.bucket_bytes = {4 << 20};
  large.timeline.bucket_ready_ms = {50};
  EXPECT_DOUBLE_EQ(predict_point(large, 2, 8, measured_fabric()).communication_ms, 4.2);
}

}  // namespace
}  // namespace gpubench
