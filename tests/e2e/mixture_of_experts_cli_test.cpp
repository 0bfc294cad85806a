// gpt-oss through the binary (docs/models.md#mixture-of-experts): train in full and with LoRA,
// generate with the experts in MXFP4 (its default), the results' experts block, and the bad
// inputs (exit 2, one line).
#include <gtest/gtest.h>

#include <numeric>

#include "forked_cli.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::expect_refused;
using testing::read_json;
using testing::run_gpubench;
using testing::ScratchDirectory;

const char* kTiny = " --model test-tiny-gpt-oss --device cpu --warmup-steps 1 --steps 2 --repeat 2";

// Every routed token is counted once per MoE layer: the per-step loads over the experts add up to
// k routes for each token a step computes.
void expect_routed(const nlohmann::json& experts, double tokens_per_step) {
  EXPECT_EQ(experts["experts"], 8);
  EXPECT_EQ(experts["experts_per_token"], 2);
  EXPECT_EQ(experts["steps"], 4);  // 2 steps in each of 2 windows
  EXPECT_EQ(experts["dropped_tokens"], 0);
  const auto loads = experts["tokens_per_expert_per_step"].get<std::vector<double>>();
  ASSERT_EQ(loads.size(), 8u);
  EXPECT_DOUBLE_EQ(std::accumulate(loads.begin(), loads.end(), 0.0), 2 * tokens_per_step);
  EXPECT_GE(experts["load_max_over_mean"].get<double>(), 1.0);
}

TEST(MixtureOfExpertsCli, TrainsInFullAndWithLoraRecordingActiveParametersAndExpertLoads) {
  ScratchDirectory dir("moe-train");
  const auto full = run_gpubench("train" + std::string(kTiny) +
                                 " --batch-size 2 --seq-len 8 --output " + dir.file("full.json"));
  ASSERT_EQ(full.exit_code, 0) << full.output;
  const auto r = read_json(dir.file("full.json"));
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["metrics"]["throughput_unit"], "tokens/sec");
  expect_routed(r["experts"], 2 * 8);
  EXPECT_GT(r["experts"]["active_params"].get<int64_t>(), 0);
  EXPECT_LT(r["experts"]["active_params"].get<int64_t>(), r["benchmark"]["params"].get<int64_t>());

  const auto lora =
      run_gpubench("train" + std::string(kTiny) +
                   " --batch-size 1 --seq-len 8 --tuning lora --output " + dir.file("lora.json"));
  ASSERT_EQ(lora.exit_code, 0) << lora.output;
  const auto l = read_json(dir.file("lora.json"));
  EXPECT_EQ(l["benchmark"]["lora_targets"], "all-linear");  // the attention projections
  EXPECT_LT(l["benchmark"]["trainable_params"].get<int64_t>(),
            l["benchmark"]["params"].get<int64_t>() / 10);
  expect_routed(l["experts"], 8);
}

TEST(MixtureOfExpertsCli, GeneratesWithItsExpertsInMxfp4ByDefault) {
  ScratchDirectory dir("moe-infer");
  const auto run =
      run_gpubench("infer" + std::string(kTiny) +
                   " --batch-size 2 --prompt-len 6 --gen-len 4 --output " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["benchmark"]["weights"], "mxfp4");
  EXPECT_EQ(r["benchmark"]["precision"], "bf16");
  EXPECT_EQ(r["metrics"]["inference"]["weights_held"],
            "mxfp4 (dequantised; native FP4 needs compute capability 10.0)");
  // A generation: the prompt's 6 tokens and 3 decoded one at a time, for each of 2 sequences.
  expect_routed(r["experts"], 2 * (6 + 3));
  // Each decode step reads the experts its tokens chose, in MXFP4, not every expert.
  EXPECT_GT(r["metrics"]["inference"]["weight_bytes_per_decoded_token"].get<int64_t>(), 0);
}

// fit --expert-parallel predicts one rank's memory (features/model_options.h:
// probed_model_options): its share of the experts, the tokens routed to them as many as its own
// make.
TEST(MixtureOfExpertsCli, FitPredictsAnExpertParallelRank) {
  const auto run = run_gpubench(
      "fit --model test-tiny-gpt-oss --task infer --gpus 2 "
      "--expert-parallel 2 --batch-size 2 --prompt-len 6 --gen-len 4 "
      "--memory 1GB");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("one expert-parallel rank's 4 of 8 experts a layer, routed as many "
                            "tokens as its own (the exchanges' buffers left out)"),
            std::string::npos)
      << run.output;
}

// Two Gloo ranks hold 4 experts each (docs/parallelism.md#expert-parallelism): every rank has its
// own tokens, and the exchanges are counted and timed in the distributed block. (That the ranks
// compute what one rank does is the TensorParallel test's.)
TEST(MixtureOfExpertsCli, SplitsItsExpertsOverTwoRanksToTrainAndGenerate) {
  ScratchDirectory dir("moe-ep");
  const std::string ep = std::string(kTiny) + " --gpus 2 --expert-parallel 2 --batch-size 1";
  const auto train = run_gpubench("train" + ep + " --seq-len 8 --output " + dir.file("t.json"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto t = read_json(dir.file("t.json"));
  EXPECT_EQ(t["status"], "ok");
  EXPECT_EQ(t["benchmark"]["expert_parallel"], 2);
  EXPECT_EQ(t["distributed"]["expert_parallel"], 2);
  EXPECT_EQ(t["distributed"]["world_size"], 2);
  // Per MoE layer, per step: the counts, the tokens out and back, their experts' ids; and the
  // backward's two exchanges of gradients. 4 layers.
  EXPECT_EQ(t["distributed"]["expert_parallel_collectives"], 4 * (4 + 2));
  EXPECT_GT(t["distributed"]["expert_parallel_exposed_ms"].get<double>(), 0);
  EXPECT_FALSE(t["distributed"].contains("tensor_parallel_collectives"));
  expect_routed(t["experts"], 8);  // rank 0's own tokens

  const auto infer =
      run_gpubench("infer" + ep + " --prompt-len 6 --gen-len 4 --output " + dir.file("i.json"));
  ASSERT_EQ(infer.exit_code, 0) << infer.output;
  const auto i = read_json(dir.file("i.json"));
  EXPECT_EQ(i["status"], "ok");
  EXPECT_EQ(i["benchmark"]["weights"], "mxfp4");
  EXPECT_EQ(i["distributed"]["expert_parallel"], 2);
  EXPECT_EQ(i["distributed"]["expert_parallel_collectives"], 4 * 4);  // a decode step's
  EXPECT_GT(i["distributed"]["expert_parallel_prefill_exposed_ms"].get<double>(), 0);
}

TEST(MixtureOfExpertsCli, BadInputIsAUsageError) {
  expect_refused(
      "infer --model test-tiny-llama --device cpu --prompt-len 6 --gen-len 4 --weights mxfp4",
      "--weights 'mxfp4' holds the experts of a mixture of experts");
  expect_refused(
      "infer --model test-tiny-gpt-oss --device cpu --prompt-len 6 --gen-len 4 --weights int4",
      "--weights 'int4' applies to the models that hold integer weights");
  expect_refused("train --model test-tiny-gpt-oss --device cpu --weights mxfp4",
                 "applies to gpubench infer");
  expect_refused(
      "infer --model test-tiny-gpt-oss --device cpu --prompt-len 6 --gen-len 4 --mode graph",
      "graph");
  expect_refused("train --model test-tiny-llama --device cpu --experts-per-token 2",
                 "--experts-per-token applies to the mixtures of experts");
  expect_refused("train --model test-tiny-gpt-oss --device cpu --experts-per-token 9",
                 "--experts-per-token 9 is more than test-tiny-gpt-oss's 8 experts; give 1 to 8");
  expect_refused("train --model test-tiny-llama --device cpu --gpus 2 --expert-parallel 2",
                 "--expert-parallel 2: test-tiny-llama has no experts; expert parallelism applies "
                 "to gpt-oss-120b, gpt-oss-20b");
  expect_refused("train --model test-tiny-gpt-oss --device cpu --gpus 4 --expert-parallel 3",
                 "--expert-parallel 3 does not divide gpus 4");
  expect_refused("train --model test-tiny-gpt-oss --device cpu --gpus 3 --expert-parallel 3",
                 "--expert-parallel 3 does not divide test-tiny-gpt-oss's 8 experts");
  expect_refused(
      "train --model test-tiny-gpt-oss --device cpu --gpus 4 --expert-parallel 2 "
      "--tensor-parallel 2",
      "--expert-parallel 2 with --tensor-parallel 2: expert and tensor parallelism together are "
      "not "
      "supported");
  // Sharding once averaged the experts different ranks hold: the loss went 5.2354 against
  // 5.1862 without --shard (hostile input, round 4).
  for (const std::string shard : {"full", "grads"}) {
    expect_refused(
        "train --model test-tiny-gpt-oss --device cpu --gpus 2 --expert-parallel 2 "
        "--shard " +
            shard,
        "--expert-parallel 2 with shard " + shard +
            ": sharding reduces every gradient over all ranks, which would average "
            "experts that different ranks hold; use shard none with --expert-parallel");
  }
  expect_refused("infer --model gpt-oss-20b --device cpu --gpus 4 --tensor-parallel 4",
                 "--weights mxfp4 with --tensor-parallel 4: gpt-oss-20b's expert width 2880 splits "
                 "into 720 per rank, not whole MXFP4 blocks of 32");
}

}  // namespace
}  // namespace gpubench
