// The arithmetic of a sharded-data-parallel prediction
// (features/parallelism/scaling/sharded_prediction.h) from a fixed step and a fixed measured
// all-reduce curve, against figures worked out by hand: what the CPU-rank check
// (scripts/check-scale-shard.sh) relies on, without timing anything.
#include "features/parallelism/scaling/sharded_prediction.h"

#include <gtest/gtest.h>

#include "base/measured_fabric.h"
#include "common/errors.h"

namespace gpubench {
namespace {

using testing::measured_fabric;

// A 100 ms float32 step (forward 30, backward 60, optimiser 5) of 2 blocks of 131,072 parameters
// (512 KiB) and a root of 65,536 (256 KiB) whose head is 256 x 256: the blocks take 0.4 of each
// pass each, the head 0.2 (forward 12 + 12 + 6 ms, backward 12 + 24 + 24).
ScaleInput fixed_input() {
  ScaleInput input;
  input.source = "one.json";
  input.model = "a-llama";
  input.step_ms = 100;
  input.throughput = 40;
  input.batch_size = 4;
  input.hidden_size = 256;
  input.vocab = 256;
  input.blocks = 2;
  input.block_params = 131072;
  input.root_params = 65536;
  input.activation_bytes = 4;
  input.timeline.forward_ms = 30;
  input.timeline.backward_ms = 60;
  input.timeline.optimizer_ms = 5;
  return input;
}

// The curve's all-reduce of 512 KiB and of 256 KiB, in ms: 100 us, then 1 ms a MiB above 4 KiB.
const double kBlockAllReduce = (100 + (524288.0 - 4096) / (1048576 - 4096) * 1000) / 1000;
const double kRootAllReduce = (100 + (262144.0 - 4096) / (1048576 - 4096) * 1000) / 1000;

TEST(ShardedPrediction, CpuRanksAddEveryCollectiveGlooRunsToTheStep) {
  ScaleInput input = fixed_input();
  input.overlap = false;
  // full: the root gathered once, each block twice (half an all-reduce each); Gloo all-reduces
  // each block's gradients and the root's.
  const ShardedPoint full = predict_sharded_point(input, "full", 2, 2, measured_fabric());
  const double gathers = kRootAllReduce / 2 + 4 * kBlockAllReduce / 2;
  const double reductions = 2 * kBlockAllReduce + kRootAllReduce;
  EXPECT_NEAR(full.gather_ms, gathers, 1e-12);
  EXPECT_NEAR(full.reduce_scatter_ms, reductions, 1e-12);
  EXPECT_NEAR(full.step_ms, 100 + gathers + reductions, 1e-12);
  EXPECT_NEAR(full.efficiency, 100 / full.step_ms, 1e-12);
  EXPECT_NEAR(full.throughput, 40 * 2 * full.efficiency, 1e-9);
  // Each rank sends half of what it gathers and (Gloo's all-reduce) all it reduces; DDP's ring
  // all-reduce of the float32 gradients, 1.25 MiB, sends 1.25 MiB.
  const int64_t block = 524288, root = 262144;
  EXPECT_EQ(full.sent_bytes, (root + 4 * block) / 2 + (2 * block + root));
  EXPECT_EQ(full.ddp_sent_bytes, 2 * block + root);
  // grads: each unit gathered once.
  const ShardedPoint grads = predict_sharded_point(input, "grads", 2, 2, measured_fabric());
  EXPECT_NEAR(grads.gather_ms, kRootAllReduce / 2 + 2 * kBlockAllReduce / 2, 1e-12);
}

TEST(ShardedPrediction, OverlappedCollectivesAddWhatThePrefetchCannotHide) {
  Fabric fabric = measured_fabric();
  fabric.measured->backend = "nccl";  // reduce-scatters of half an all-reduce
  const double block = kBlockAllReduce / 2, root = kRootAllReduce / 2;
  // Exposed: the root's and the first block's gathers before the forward, the last block's
  // before its backward, and after backward the first block's reduce-scatter (issued as its
  // backward ends) and the root's; every other collective runs under a block's compute.
  const ShardedPoint full = predict_sharded_point(fixed_input(), "full", 2, 2, fabric);
  EXPECT_NEAR(full.exposed_ms, root + block + block + block + root, 1e-12);
  EXPECT_NEAR(full.step_ms, 100 + full.exposed_ms, 1e-12);
  EXPECT_NEAR(full.gather_ms, root + 4 * block, 1e-12);
  EXPECT_NEAR(full.reduce_scatter_ms, 2 * block + root, 1e-12);
  EXPECT_EQ(full.bottleneck, "bandwidth");
  // One rank: nothing to communicate.
  const ShardedPoint one = predict_sharded_point(fixed_input(), "full", 1, 2, fabric);
  EXPECT_DOUBLE_EQ(one.step_ms, 100);
  EXPECT_EQ(one.bottleneck, "compute");
}

// 2^20 blocks of 2^40 parameters (hostile input, round 4): refused, not printed negative.
TEST(ShardedPrediction, ParametersPastInt64AreRefused) {
  ScaleInput input = fixed_input();
  input.blocks = 1 << 20;
  input.block_params = int64_t{1} << 40;
  for (const char* mode : {"full", "grads"}) {
    try {
      predict_sharded_point(input, mode, 8, 8, measured_fabric());
      ADD_FAILURE() << mode << ": overflow not caught";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find("the result's figures overflow"), std::string::npos)
          << error.what();
    }
  }
}

TEST(ShardedPrediction, RefusesAResultWithoutBlocksAndAnUnknownMode) {
  ScaleInput input = fixed_input();
  EXPECT_THROW(predict_sharded_point(input, "zero3", 2, 2, measured_fabric()), UsageError);
  input.block_params = 0;
  try {
    predict_sharded_point(input, "full", 2, 2, measured_fabric());
    FAIL() << "no blocks predicted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("records no repeated blocks"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpubench
