// Through the binary: every training result carries its backward timeline (docs/scaling.md).
#include <gtest/gtest.h>

#include <numeric>

#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::read_json;
using testing::run_gpubench;
using testing::ScratchDirectory;

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
