// The backward timeline (docs/scaling.md): the recorder on a hand-built model, whose buckets are
// DDP's and whose points can be read only after the device is synchronised; and through the
// binary, every training result's timeline block (single device, LoRA, two Gloo ranks) and none
// with --no-timeline.
#include <gtest/gtest.h>

#include <numeric>

#include "distributed/gradient_buckets.h"
#include "test_helpers.h"
#include "torch_support/device_timers.h"
#include "train/step_timeline.h"

namespace gpubench {
namespace {

using testing::read_json;
using testing::run_gpubench;
using testing::ScratchDirectory;

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
  EXPECT_LT(info.overhead_ms, info.backward_ms);
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

int64_t sum_of(const nlohmann::json& values) {
  int64_t total = 0;
  for (const auto& v : values) total += v.get<int64_t>();
  return total;
}

void expect_consistent_timeline(const nlohmann::json& r, int64_t steps) {
  ASSERT_TRUE(r.contains("timeline")) << r.dump(1);
  const auto& t = r["timeline"];
  EXPECT_EQ(t["measured_over"], "timed steps");
  EXPECT_EQ(t["steps"], steps);
  const auto& ready = t["bucket_ready_ms"];
  ASSERT_EQ(ready.size(), t["bucket_bytes"].size());
  for (const auto& at : ready) EXPECT_LE(at.get<double>(), t["backward_ms"].get<double>());
  EXPECT_GT(t["forward_ms"].get<double>(), 0);
  EXPECT_GT(t["optimizer_ms"].get<double>(), 0);
  EXPECT_GT(t["overhead_ms"].get<double>(), 0);
  EXPECT_LT(t["overhead_share"].get<double>(), 0.5);
}

TEST(StepTimelineCli, ATrainingResultCarriesItsBackwardTimeline) {
  ScratchDirectory dir("timeline-train");
  const auto run = run_gpubench(
      "train --model test-tiny-cnn --device cpu --batch-size 2 --warmup-steps 1 --steps 4 "
      "--repeat 2 --output " +
      dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  expect_consistent_timeline(r, 8);
  EXPECT_EQ(sum_of(r["timeline"]["bucket_bytes"]), r["benchmark"]["params"].get<int64_t>() * 4)
      << "every fp32 gradient in a bucket";
  EXPECT_EQ(r["benchmark"]["timeline"], true);

  const auto off = run_gpubench(
      "train --model test-tiny-cnn --device cpu --batch-size 2 --warmup-steps 1 --steps 4 "
      "--repeat 1 --no-timeline --output " +
      dir.file("off.json"));
  ASSERT_EQ(off.exit_code, 0) << off.output;
  const auto o = read_json(dir.file("off.json"));
  EXPECT_FALSE(o.contains("timeline"));
  EXPECT_EQ(o["benchmark"]["timeline"], false);
}

TEST(StepTimelineCli, LoraBucketsHoldOnlyTheAdapters) {
  ScratchDirectory dir("timeline-lora");
  const auto run = run_gpubench(
      "train --model test-tiny-llama --tuning lora --device cpu --batch-size 1 --warmup-steps 1 "
      "--steps 3 --repeat 1 --output " +
      dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  expect_consistent_timeline(r, 3);
  const int64_t trainable = r["benchmark"]["trainable_params"].get<int64_t>();
  EXPECT_EQ(sum_of(r["timeline"]["bucket_bytes"]), trainable * 4);
  EXPECT_LT(trainable * 4, r["benchmark"]["params"].get<int64_t>());
}

TEST(StepTimelineCli, DataParallelRanksRecordTheirWaitForTheAllReduces) {
  ScratchDirectory dir("timeline-ddp");
  const auto run = run_gpubench(
      "train --model test-tiny-cnn --device cpu --gpus 2 --batch-size 2 --warmup-steps 1 "
      "--steps 3 --repeat 1 --output " +
      dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  expect_consistent_timeline(r, 3);
  EXPECT_EQ(r["timeline"]["bucket_bytes"].size(), r["distributed"]["buckets"].get<size_t>());
  EXPECT_EQ(sum_of(r["timeline"]["bucket_bytes"]), r["distributed"]["gradient_bytes"]);
  EXPECT_GT(r["timeline"]["gradient_sync_ms"].get<double>(), 0);
}

}  // namespace
}  // namespace gpubench
