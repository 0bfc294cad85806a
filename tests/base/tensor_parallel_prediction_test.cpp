// The arithmetic of a tensor-parallel prediction
// (features/parallelism/scaling/tensor_parallel_prediction.h) from a fixed step and a fixed
// measured all-reduce curve, against figures worked out by hand: what the CPU-rank check
// (scripts/check-scale-tensor-parallel.sh) relies on, without timing anything.
#include "features/parallelism/scaling/tensor_parallel_prediction.h"

#include <gtest/gtest.h>

#include "base/measured_fabric.h"
#include "common/errors.h"
#include "features/parallelism/scaling/checked_product.h"
#include "features/parallelism/scaling/collective_cost.h"

namespace gpubench {
namespace {

using testing::measured_fabric;

// A 100 ms step of 4 blocks of hidden 256 at batch 2 of 1024 tokens in 16-bit activations: each
// activation all-reduce carries 2 x 1024 x 256 x 2 bytes = 1 MiB.
ScaleInput fixed_input() {
  ScaleInput input;
  input.source = "one.json";
  input.model = "a-llama";
  input.step_ms = 100;
  input.throughput = 20;
  input.batch_size = 2;
  input.seq_len = 1024;
  input.hidden_size = 256;
  input.blocks = 4;
  input.activation_bytes = 2;
  return input;
}

TEST(TensorParallelPrediction, HalfTheStepPlusFourAllReducesABlockAndTwoMore) {
  // 18 all-reduces of 1 MiB at 1.1 ms each (0.1 latency, 1.0 bandwidth): 19.8 ms on 50.
  const TensorParallelPoint point =
      predict_tensor_parallel_point(fixed_input(), 2, measured_fabric());
  EXPECT_EQ(point.collectives, 18);
  EXPECT_EQ(point.activation_bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(point.compute_ms, 50);
  EXPECT_NEAR(point.latency_ms, 1.8, 1e-12);
  EXPECT_NEAR(point.bandwidth_ms, 18, 1e-12);
  EXPECT_NEAR(point.step_ms, 69.8, 1e-12);
  EXPECT_NEAR(point.efficiency, 100 / (2 * 69.8), 1e-12);
  EXPECT_NEAR(point.throughput, 20 * 100 / 69.8, 1e-12);
  EXPECT_EQ(point.bottleneck, "bandwidth");
}

TEST(TensorParallelPrediction, LoraAddsEachWholeFactorsGradientSum) {
  ScaleInput input = fixed_input();
  input.lora_targets = 2;
  input.lora_rank = 16;
  // 8 more of 16 x 256 x 4 = 16 KiB: 100 us + (16 KiB - 4 KiB) / (1 MiB - 4 KiB) x 1000 us.
  const TensorParallelPoint point = predict_tensor_parallel_point(input, 2, measured_fabric());
  EXPECT_EQ(point.collectives, 26);
  EXPECT_NEAR(point.latency_ms, 1.8 + 0.8, 1e-12);
  EXPECT_NEAR(point.bandwidth_ms, 18 + 8 * (12288.0 / 1044480.0), 1e-12);
}

// A decode step of batch 8 (one token each) at 20 ms: 2 all-reduces a block and the
// embedding's, 9 of 8 x 256 x 2 bytes = 4 KiB (100 us each, all latency), and the logits'
// all-gather, half a ring all-reduce of 8 x 65,536 x 2 bytes = 1 MiB (0.55 ms).
TEST(TensorParallelPrediction, ADecodeStepIsLatencyBound) {
  ScaleInput input = fixed_input();
  input.decode = true;
  input.step_ms = 20;
  input.batch_size = 8;
  input.vocab = 65536;
  const TensorParallelPoint point = predict_tensor_parallel_point(input, 2, measured_fabric());
  EXPECT_EQ(point.collectives, 10);
  EXPECT_EQ(point.activation_bytes, 4096);
  EXPECT_DOUBLE_EQ(point.compute_ms, 10);
  EXPECT_NEAR(point.latency_ms, 0.9 + 0.05, 1e-12);
  EXPECT_NEAR(point.bandwidth_ms, 0.5, 1e-12);
  EXPECT_NEAR(point.step_ms, 11.45, 1e-12);
  EXPECT_EQ(point.bottleneck, "latency");
}

TEST(TensorParallelPrediction, OneRankIsTheMeasuredStepAndANodeBoundsTheRanks) {
  const TensorParallelPrediction prediction =
      predict_tensor_parallel(fixed_input(), {measured_fabric()}, {1, 2, 16}, 8);
  ASSERT_EQ(prediction.lines.size(), 1u);
  const TensorParallelLine& line = prediction.lines.front();
  ASSERT_EQ(line.points.size(), 2u);
  EXPECT_DOUBLE_EQ(line.points[0].step_ms, 100);
  EXPECT_EQ(line.points[0].collectives, 0);
  EXPECT_EQ(line.points[0].bottleneck, "compute");
  EXPECT_EQ(line.beyond_one_node, std::vector<int>{16});
  const std::string markdown = render_tensor_parallel(prediction, "markdown");
  EXPECT_NE(markdown.find("Predicted, not measured"), std::string::npos);
  EXPECT_NE(markdown.find("Left out 16 ranks"), std::string::npos);
  EXPECT_THROW(render_tensor_parallel(prediction, "html"), UsageError);
}

TEST(TensorParallelPrediction, AResultWithoutATransformersShapeIsRefused) {
  ScaleInput input = fixed_input();
  input.hidden_size = 0;
  EXPECT_THROW(predict_tensor_parallel_point(input, 2, measured_fabric()), UsageError);
}

// Links in round numbers: 100 GB/s and 1 us a step inside a node, a 50 GB/s NIC for each GPU
// and 5 us a step between nodes.
Fabric round_links() {
  Fabric fabric;
  fabric.label = "round";
  fabric.intra = {"custom", "custom", 100, 1, 0, "--fabric"};
  fabric.inter = LinkFigures{"custom", "custom", 50, 5, 5, "--fabric"};
  return fabric;
}

// 8 ranks over nodes of 4, 2 MiB from each: 3/8 of it to the node's peers (7.86 us at 100 GB/s)
// while 4/8 crosses the NICs (20.97 us at 50 GB/s); NCCL's base latency, 3 steps inside the
// node and 4 across.
TEST(ExpertParallelPrediction, APairwiseAllToAllCrossesTheNodesLinksAndItsNicsAtOnce) {
  const CollectiveCost cost = alltoall_cost(2 << 20, 8, 4, round_links());
  EXPECT_EQ(cost.algorithm, "pairwise");
  EXPECT_NEAR(cost.latency_us, 8.4 + 3 * 1 + 4 * 5, 1e-12);
  EXPECT_NEAR(cost.bandwidth_us, (2 << 20) / 2.0 / 50e3, 1e-12);
  const CollectiveCost in_node = alltoall_cost(2 << 20, 4, 4, round_links());
  EXPECT_NEAR(in_node.bandwidth_us, (2 << 20) * 3.0 / 4 / 100e3, 1e-12);
  EXPECT_THROW(alltoall_cost(1 << 20, 2, 8, measured_fabric()), UsageError);
}

// The fixed step of a mixture of 8 experts, top-2: 2 x 1024 tokens make 4096 routed rows, whose
// exchange carries 4096 x 256 x 2 bytes = 2 MiB. Per block: the counts (16 bytes over 2 ranks),
// the rows' experts (32 KiB) and the rows four times (out and back, and their gradients): 24
// exchanges, each 9.4 us of latency, half of each message leaving the rank at 100 GB/s.
TEST(ExpertParallelPrediction, EachRankKeepsItsStepAndAddsTheLayersExchanges) {
  ScaleInput input = fixed_input();
  input.experts = 8;
  input.experts_per_token = 2;
  const TensorParallelPoint point = predict_expert_parallel_point(input, 2, round_links(), 8);
  EXPECT_EQ(point.collectives, 24);
  EXPECT_EQ(point.activation_bytes, 2 << 20);
  EXPECT_DOUBLE_EQ(point.compute_ms, 100);
  EXPECT_NEAR(point.latency_ms, 24 * 9.4 / 1000, 1e-12);
  const double bandwidth_us = (4 * 8 + 4 * 16384 + 16 * (1 << 20)) / 100e3;
  EXPECT_NEAR(point.bandwidth_ms, bandwidth_us / 1000, 1e-12);
  EXPECT_NEAR(point.step_ms, 100 + (24 * 9.4 + bandwidth_us) / 1000, 1e-12);
  EXPECT_NEAR(point.throughput, 2 * 20 * 100 / point.step_ms, 1e-9);
  input.decode = true;  // a decode step: the rows out and back only, of one token a sequence
  EXPECT_EQ(predict_expert_parallel_point(input, 2, round_links(), 8).collectives, 4 * 4);
}

// The run's rule, one definition (settings/benchmark.h): a split the run refuses is not predicted
// (hostile input, round 4: 3, 5, 7 and 16 ranks were predicted for 8 experts).
TEST(ExpertParallelPrediction, ASplitTheRunRefusesIsRefused) {
  ScaleInput input = fixed_input();
  input.model = "test-tiny-gpt-oss";
  input.experts = 8;
  input.experts_per_token = 2;
  for (const int ranks : {3, 5, 7, 16}) {
    try {
      predict_expert_parallel_point(input, ranks, round_links(), 16);
      ADD_FAILURE() << ranks;
    } catch (const UsageError& error) {
      EXPECT_EQ(std::string(error.what()), why_not_expert_split(ranks, 8, "test-tiny-gpt-oss"));
      EXPECT_EQ(std::string(error.what()),
                "expert_parallel " + std::to_string(ranks) +
                    " does not divide test-tiny-gpt-oss's 8 experts: each rank holds the same "
                    "number of whole experts");
    }
  }
  for (const int ranks : {1, 2, 4, 8}) {
    EXPECT_NO_THROW(predict_expert_parallel_point(input, ranks, round_links(), 16)) << ranks;
  }
}

// Figures the reader accepts, each within its bound, multiplied past 2^63: refused, where they
// printed negative bytes with exit 0 (hostile input, round 4).
TEST(TensorParallelPrediction, ProductsPastInt64AreRefused) {
  ScaleInput input = fixed_input();
  input.batch_size = input.seq_len = input.hidden_size = int64_t{1} << 22;
  try {
    predict_tensor_parallel_point(input, 2, measured_fabric());
    ADD_FAILURE() << "overflow not caught";
  } catch (const UsageError& error) {
    EXPECT_EQ(std::string(error.what()),
              "the result's figures overflow the activations' bytes (over 2^63): no run records "
              "such sizes");
  }
  input = fixed_input();
  input.experts = 1 << 20;
  input.experts_per_token = 1 << 20;
  input.batch_size = input.seq_len = int64_t{1} << 20;
  EXPECT_THROW(predict_expert_parallel_point(input, 2, round_links(), 8), UsageError);
  EXPECT_EQ(checked_product({int64_t{1} << 31, int64_t{1} << 31}, "x"), int64_t{1} << 62);
}

TEST(ExpertParallelPrediction, ADenseModelsResultIsRefused) {
  EXPECT_THROW(predict_expert_parallel_point(fixed_input(), 2, round_links(), 8), UsageError);
  const TensorParallelPrediction prediction = [] {
    ScaleInput input = fixed_input();
    input.experts = 8;
    input.experts_per_token = 2;
    Fabric one_node = round_links();
    one_node.inter.reset();
    return predict_expert_parallel(input, {one_node}, {2, 16}, 8);
  }();
  EXPECT_EQ(prediction.lines.front().beyond_one_node, std::vector<int>{16});
  const std::string markdown = render_tensor_parallel(prediction, "markdown");
  EXPECT_NE(markdown.find("Predicted expert parallelism"), std::string::npos);
  EXPECT_NE(markdown.find("all-to-all ms"), std::string::npos);
  EXPECT_NE(markdown.find("names no network"), std::string::npos);
}

}  // namespace
}  // namespace gpubench
