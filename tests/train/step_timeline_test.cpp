// The backward timeline (docs/scaling.md): the recorder on a hand-built model, whose buckets are
// DDP's and whose points can be read only after the device is synchronised (through the binary:
// e2e/step_timeline_cli_test.cpp).
#include <gtest/gtest.h>

#include <numeric>

#include "distributed/gradient_buckets.h"
#include "torch_support/device_timers.h"
#include "train/step_timeline.h"

namespace gpubench {
namespace {

// Three layers' weights of 64 KiB, 1 MiB and 2 MiB: with 1 MiB buckets DDP fills them last
// layer first, the first bucket closing at 1 MiB.
struct ThreeLayers {
  std::vector<torch::Tensor> weights = {torch::randn({128, 128}, torch::requires_grad()),
                                        torch::randn({512, 512}, torch::requires_grad()),
                                        torch::randn({512, 1024}, torch::requires_grad())};
  void step(StepTimeline& timeline) {
    timeline.mark(StepPoint::kBegin);
    torch::Tensor x = torch::randn({4, 128});
    x = x.matmul(weights[0]).repeat({1, 4}).matmul(weights[1]).matmul(weights[2]);
    const torch::Tensor loss = x.pow(2).mean();
    timeline.mark(StepPoint::kForwardEnd);
    loss.backward();
    timeline.mark(StepPoint::kBackwardEnd);
    timeline.mark(StepPoint::kEnd);
  }
};

TEST(StepTimeline, TimesDdpBucketsFromTheStartOfBackward) {
  ThreeLayers model;
  const int64_t cap = 1 << 20;
  StepTimeline timeline(torch::kCPU, model.weights, cap);
  for (int i = 0; i < 5; ++i) model.step(timeline);
  EXPECT_THROW(timeline.summary(3, "timed steps"), std::logic_error)
      << "read before the device was synchronised";
  for (int i = 0; i < 5; ++i) model.step(timeline);
  synchronize_device(torch::kCPU);
  const StepTimelineInfo info = timeline.summary(3, "timed steps");
  EXPECT_EQ(info.steps, 3) << "the last three of five complete steps";
  EXPECT_EQ(info.clock, "host clock");
  const GradientBuckets layout = assign_gradient_buckets(model.weights, cap);
  EXPECT_EQ(info.bucket_bytes, layout.bytes);
  ASSERT_EQ(info.bucket_bytes.size(), 3u) << "each weight fills a bucket of its own";
  EXPECT_EQ(info.bucket_bytes[0], 512 * 1024 * 4) << "the last layer's, first";
  ASSERT_EQ(info.bucket_ready_ms.size(), 3u);
  for (size_t b = 0; b < 3; ++b) {
    EXPECT_GE(info.bucket_ready_ms[b], 0);
    EXPECT_LE(info.bucket_ready_ms[b], info.backward_ms) << "ready before backward returned";
    if (b > 0) {
      EXPECT_GE(info.bucket_ready_ms[b], info.bucket_ready_ms[b - 1]) << "in order";
    }
  }
  EXPECT_GT(info.forward_ms, 0);
  EXPECT_EQ(info.gradient_sync_ms, 0) << "no synchronizer";
  EXPECT_GT(info.overhead_ms, 0) << "the recorder's own time is measured";
}

TEST(StepTimeline, RecordsNothingWhilePausedOrAfterStopping) {
  ThreeLayers model;
  StepTimeline timeline(torch::kCPU, model.weights, 1 << 20);
  timeline.set_paused(true);
  model.step(timeline);
  timeline.set_paused(false);
  model.step(timeline);
  timeline.stop();
  model.step(timeline);
  synchronize_device(torch::kCPU);
  EXPECT_EQ(timeline.summary(10, "timed steps").steps, 1);
}

}  // namespace
}  // namespace gpubench
