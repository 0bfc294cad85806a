// A timeline of a model built with fewer blocks, extended to the model's depth
// (features/parallelism/scaling/timeline_extension.h), and DDP's bucket rule on sizes
// (features/parallelism/scaling/bucket_rule.h).
#include "features/parallelism/scaling/timeline_extension.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "features/parallelism/scaling/bucket_rule.h"

namespace gpubench {
namespace {

TEST(BucketRule, FirstBucketClosesAtOneMibTheRestAtTheCapAndADtypeChangeOpensOne) {
  const int64_t mib = 1 << 20;
  const auto of = bucket_of_gradients(
      {{mib / 2, 0}, {mib, 0}, {3 * mib, 0}, {mib, 0}, {mib, 0}, {mib, 1}, {mib, 1}}, 4 * mib);
  EXPECT_EQ(of, (std::vector<size_t>{0, 0, 1, 1, 2, 3, 3}));
}

// Two blocks of two parameters (10 and 20 bytes), a head of 5 bytes and an embedding of 7,
// ready in backward as a real --blocks 2 run times them: a block takes 3 ms.
StepTimelineInfo two_of_four_blocks() {
  StepTimelineInfo t;
  t.steps = 3;
  t.forward_ms = 4;
  t.backward_ms = 8;
  t.optimizer_ms = 1;
  t.bucket_bytes = {5, 10, 20, 10, 20, 7};
  t.bucket_ready_ms = {0.5, 1.5, 2.5, 4.5, 5.5, 6.0};
  t.parameter_blocks = {-1, 1, 1, 0, 0, -1};
  t.model_blocks = 4;
  return t;
}

TEST(TimelineExtension, AddsABlocksPeriodPerMissingBlockAndRebucketsAtTheCap) {
  const ExtendedTimeline x = extend_timeline(two_of_four_blocks(), 14.0, 1 << 20);
  // Every gradient fits the first bucket's 1 MiB: one bucket, ready when the embedding is.
  ASSERT_EQ(x.timeline.bucket_bytes.size(), 1u);
  EXPECT_EQ(x.timeline.bucket_bytes[0], 5 + 4 * 30 + 7);
  EXPECT_DOUBLE_EQ(x.timeline.bucket_ready_ms[0], 6.0 + 2 * 3.0);
  EXPECT_DOUBLE_EQ(x.timeline.backward_ms, 8 + 2 * 3.0);
  EXPECT_DOUBLE_EQ(x.timeline.forward_ms, 4 * 14.0 / 8);
  EXPECT_DOUBLE_EQ(x.timeline.optimizer_ms, 1.0 * 132 / 72);
  // The step keeps what the measured one spent outside the phases (14 - 13 = 1 ms).
  EXPECT_DOUBLE_EQ(x.step_ms, 1 + 7 + 14 + 1.0 * 132 / 72);
  EXPECT_TRUE(x.timeline.parameter_blocks.empty());
  EXPECT_NE(x.how.find("from 2 to 4 blocks"), std::string::npos) << x.how;
}

TEST(TimelineExtension, EachParameterItsOwnBucketAtACapOfOneByteShowsTheOrder) {
  const ExtendedTimeline x = extend_timeline(two_of_four_blocks(), 14.0, 1);
  EXPECT_EQ(x.timeline.bucket_bytes, (std::vector<int64_t>{5, 10, 20, 10, 20, 10, 20, 10, 20, 7}));
  EXPECT_EQ(x.timeline.bucket_ready_ms,
            (std::vector<double>{0.5, 1.5, 2.5, 4.5, 5.5, 7.5, 8.5, 10.5, 11.5, 12.0}));
}

TEST(TimelineExtension, RefusesOneBlockAndBlocksThatDiffer) {
  StepTimelineInfo one = two_of_four_blocks();
  one.parameter_blocks = {-1, 0, 0, 0, 0, -1};
  EXPECT_THROW(extend_timeline(one, 14.0, 1 << 20), UsageError);
  StepTimelineInfo odd = two_of_four_blocks();
  odd.parameter_blocks = {-1, 1, 0, 0, 0, -1};
  EXPECT_THROW(extend_timeline(odd, 14.0, 1 << 20), UsageError);
}

}  // namespace
}  // namespace gpubench
