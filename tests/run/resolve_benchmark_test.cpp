// From request to resolved benchmark: each default from its owner (the table, the model's
// registration, the precision policy, the machine).
#include "run/resolve_benchmark.h"

#include <gtest/gtest.h>

#include "common/errors.h"
#include "features/graph_mode/graph_mode.h"
#include "features/weights/weight_rules.h"
#include "settings/benchmark_fields.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

MachineFacts gpu_machine(int devices = 2) {
  MachineFacts machine;
  machine.cuda_available = true;
  machine.cuda_device_count = devices;
  machine.cpu_cores = 8;
  return machine;
}

MachineFacts cpu_machine() {
  MachineFacts machine;
  machine.cpu_cores = 8;
  return machine;
}

std::string error_of(const BenchmarkRequest& request, const MachineFacts& machine) {
  try {
    resolve(request, machine);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(Resolve, TheModelGivesTheBatchAndThePolicyAndModelTogetherGiveChannelsLast) {
  BenchmarkRequest request;
  request.precision = Precision::kFp16;
  const ResolvedBenchmark on_gpu = resolve(request, gpu_machine());
  EXPECT_EQ(on_gpu.model, "resnet50");
  EXPECT_EQ(on_gpu.device, DeviceKind::kCuda);
  EXPECT_EQ(on_gpu.batch_size, 64);   // resnet50's registration
  EXPECT_TRUE(on_gpu.channels_last);  // a convnet, under mixed precision on CUDA
  EXPECT_EQ(on_gpu.tgt_len, 0);
  EXPECT_EQ(on_gpu.threads, 8);
  request.precision = Precision::kFp32;
  EXPECT_FALSE(resolve(request, gpu_machine()).channels_last);
  request.precision = Precision::kBf16;
  request.model = "transformerxl-base";  // not a convnet
  request.warmup_steps = 3;
  EXPECT_FALSE(resolve(request, gpu_machine()).channels_last);
  request.model = "resnet50";
  request.channels_last = false;  // what the user says wins
  EXPECT_FALSE(resolve(request, gpu_machine()).channels_last);
}

TEST(Resolve, AnAliasBecomesTheModelsName) {
  BenchmarkRequest request;
  request.model = "inception_v3";
  EXPECT_EQ(resolve(request, cpu_machine()).model, "inception3");
}

TEST(Resolve, CpuRanksShareTheCoresAndTheCpuRunsOnlyFp32AndBf16) {
  BenchmarkRequest request;
  request.gpus = 4;
  const ResolvedBenchmark ranks = resolve(request, cpu_machine());
  EXPECT_EQ(ranks.device, DeviceKind::kCpu);
  EXPECT_EQ(ranks.threads, 2);
  request.precision = Precision::kFp16;
  EXPECT_EQ(error_of(request, cpu_machine()),
            "precision 'fp16' needs a CUDA device; on the CPU use fp32 or bf16");
  request.precision = Precision::kTf32;
  EXPECT_NE(error_of(request, cpu_machine()).find("needs a CUDA device"), std::string::npos);
}

TEST(Resolve, TransformerXLOwnsItsWarmupRuleAndImagesTakeNoSequenceLengths) {
  BenchmarkRequest request;
  request.model = "transformerxl-base";
  request.device = DeviceKind::kCpu;
  request.warmup_steps = 2;
  EXPECT_EQ(error_of(request, cpu_machine()),
            "warmup_steps 2 are too few for transformerxl-base: it needs at least 3");
  request.warmup_steps = 3;
  const ResolvedBenchmark resolved = resolve(request, cpu_machine());
  EXPECT_EQ(resolved.tgt_len, 192);
  EXPECT_EQ(resolved.mem_len, 192);
  request.tgt_len = 64;  // memory of three segments: 192 / 64 + 2 = 5 warm-up steps
  EXPECT_NE(error_of(request, cpu_machine()).find("at least 5"), std::string::npos);
  BenchmarkRequest image;
  image.model = "resnet50";
  image.tgt_len = 16;
  EXPECT_EQ(error_of(image, cpu_machine()),
            "tgt_len and mem_len apply to language models only, not to 'resnet50'");
}

TEST(Resolve, DevicesThisMachineLacksAreUsageErrors) {
  BenchmarkRequest request;
  request.device = DeviceKind::kCuda;
  EXPECT_NE(error_of(request, cpu_machine()).find("no CUDA device is available"),
            std::string::npos);
  request.gpus = 4;
  EXPECT_EQ(error_of(request, gpu_machine(2)),
            "--gpus 4 on this machine but only 2 CUDA device(s) present");
  MachineFacts one_per_task = gpu_machine(1);  // srun binding one GPU to each task
  one_per_task.local_ranks = 4;
  EXPECT_EQ(resolve(request, one_per_task).device, DeviceKind::kCuda);
  request.model = "resnet5";
  EXPECT_NE(error_of(request, gpu_machine(8)).find("unknown model 'resnet5'"), std::string::npos);
}

TEST(Resolve, GraphModeNeedsCudaAndSaysWhatItCannotCapture) {
  BenchmarkRequest request;
  request.mode = Mode::kGraph;
  EXPECT_EQ(error_of(request, cpu_machine()), "graph mode needs a CUDA device");
  request.gpus = 2;
  const std::string several = error_of(request, gpu_machine(2));
  EXPECT_NE(several.find("graph mode runs one rank"), std::string::npos) << several;
  request.gpus = 1;
  if (compat::kHasFusedSgd) {
    EXPECT_EQ(resolve(request, gpu_machine(2)).mode, Mode::kGraph);
  } else {  // Debian's LibTorch 1.13: no fused SGD, so no graph mode at all
    const std::string one = error_of(request, gpu_machine(2));
    EXPECT_NE(one.find("graph mode needs LibTorch 2.4 or newer"), std::string::npos) << one;
  }
  // What the model declares: Transformer-XL's recurrent memory cannot be replayed.
  request.model = "transformerxl-base";
  request.warmup_steps = 100;
  EXPECT_NE(error_of(request, gpu_machine(2))
                .find("graph mode cannot capture transformerxl-base's "
                      "training step: its recurrent memory"),
            std::string::npos);
}

// A capture without its warm-up would hold cuDNN's autotuning and the optimiser's first step.
TEST(Resolve, GraphModeNeedsTheWarmUpItsCaptureNeeds) {
  BenchmarkRequest request;
  request.mode = Mode::kGraph;
  request.warmup_steps = kGraphCaptureWarmupSteps - 1;
  EXPECT_NE(error_of(request, gpu_machine()).find("graph mode needs warmup_steps >= 3, got 2"),
            std::string::npos);
  request.warmup_steps = 0;
  request.task = Task::kInfer;
  EXPECT_NE(error_of(request, gpu_machine()).find("graph mode needs warmup_steps >= 1, got 0"),
            std::string::npos);
  request.warmup_steps = 1;
  EXPECT_EQ(resolve(request, gpu_machine()).mode, Mode::kGraph);
}

TEST(Resolve, TheFineTuningModelsOwnTheirSequenceLengthAndItsBound) {
  BenchmarkRequest request;
  request.model = "bert-large";
  const ResolvedBenchmark bert = resolve(request, gpu_machine());
  EXPECT_EQ(bert.seq_len, 128);
  EXPECT_EQ(bert.batch_size, 32);
  EXPECT_EQ(bert.tgt_len, 0);
  EXPECT_EQ(bert.tuning, Tuning::kFull);
  EXPECT_EQ(bert.lora_rank, 0);  // a full fine-tune records no LoRA settings
  EXPECT_EQ(bert.lora_targets, "");
  request.seq_len = 513;
  EXPECT_EQ(error_of(request, gpu_machine()),
            "seq_len 513 is more than bert-large's 512 positions");
  request.model = "llama-3-8b";
  request.seq_len.reset();
  const ResolvedBenchmark llama = resolve(request, gpu_machine());
  EXPECT_EQ(llama.seq_len, 2048);
  EXPECT_EQ(llama.batch_size, 1);
  request.model = "resnet50";
  request.seq_len = 128;
  EXPECT_EQ(error_of(request, gpu_machine()),
            "seq_len applies to the fine-tuning models (bert-large, gpt-oss-120b, gpt-oss-20b, "
            "llama-2-7b, llama-3-8b, "
            "llama-3.1-405b, llama-3.1-70b, llama-3.1-8b, llama-3.2-1b), not to 'resnet50'");
  request.seq_len.reset();
  request.tgt_len = 64;
  request.model = "bert-large";
  EXPECT_EQ(error_of(request, gpu_machine()),
            "tgt_len and mem_len apply to language models only, not to 'bert-large'");
}

TEST(Resolve, LoraIsForTheFineTuningModelsWithTheirProjectionsAsTargets) {
  BenchmarkRequest request;
  request.model = "llama-3-8b";
  request.tuning = Tuning::kLora;
  ResolvedBenchmark lora = resolve(request, gpu_machine());
  EXPECT_EQ(lora.lora_rank, 16);
  EXPECT_EQ(lora.lora_alpha, 32);
  EXPECT_EQ(lora.lora_targets, "q,k,v,o");
  request.lora_targets = "v,q";  // in the model's order, so that "v,q" and "q,v" are one benchmark
  EXPECT_EQ(resolve(request, gpu_machine()).lora_targets, "q,v");
  request.lora_targets = "down,up,gate,o,v,k,q";
  EXPECT_EQ(resolve(request, gpu_machine()).lora_targets, "all-linear");
  request.lora_targets = "query";
  EXPECT_EQ(error_of(request, gpu_machine()),
            "lora_targets 'query': 'query' is not a projection of llama-3-8b; allowed: a "
            "comma-separated list of q, k, v, o, gate, up, down, or all-linear");
  request.model = "bert-large";
  request.lora_targets = "gate";
  EXPECT_NE(error_of(request, gpu_machine())
                .find("allowed: a comma-separated list of q, k, v, o, up, down"),
            std::string::npos);
  request.model = "resnet50";
  request.lora_targets.reset();
  EXPECT_EQ(
      error_of(request, gpu_machine()),
      "tuning 'lora' applies to the fine-tuning models (bert-large, gpt-oss-120b, gpt-oss-20b, "
      "llama-2-7b, llama-3-8b, "
      "llama-3.1-405b, llama-3.1-70b, llama-3.1-8b, llama-3.2-1b); 'resnet50' trains in full only");
  request.model = "transformerxl-base";
  EXPECT_NE(error_of(request, gpu_machine()).find("'transformerxl-base' trains in full only"),
            std::string::npos);
  request.model = "llama-3-8b";
  request.tuning = Tuning::kFull;
  request.lora_rank = 8;
  EXPECT_EQ(error_of(request, gpu_machine()),
            "lora_rank applies to tuning 'lora' and 'qlora' only");
}

TEST(Resolve, ActivationCheckpointingIsForTheTransformersAndNotForGraphMode) {
  BenchmarkRequest request;
  request.activation_checkpointing = true;
  EXPECT_EQ(
      error_of(request, gpu_machine()),
      "activation_checkpointing applies to the transformer models (bert-large, gpt-oss-120b, "
      "gpt-oss-20b, llama-2-7b, "
      "llama-3-8b, llama-3.1-405b, llama-3.1-70b, llama-3.1-8b, llama-3.2-1b), not to 'resnet50'");
  request.model = "llama-3.2-1b";
  EXPECT_TRUE(resolve(request, gpu_machine()).activation_checkpointing);
  ResolvedBenchmark graphed = resolve(request, gpu_machine());
  graphed.mode = Mode::kGraph;
  if (compat::kHasFusedSgd) {
    const Refusal refusal = graph_mode_unsupported_reason(graphed);
    EXPECT_NE(refusal.message.find("cannot capture activation checkpointing"), std::string::npos);
    EXPECT_EQ(refusal.requirement, "");  // the input is at fault, not the machine
  }
}

// An adapter's rank beyond the smaller side of its projection is no longer low-rank: refused,
// naming the projection and the largest rank.
TEST(Resolve, LoraRankIsCappedByTheNarrowestTargetedProjection) {
  BenchmarkRequest request;
  request.model = "test-tiny-llama";  // hidden 32; k and v project to 2 heads x 8 = 16
  request.tuning = Tuning::kLora;
  request.lora_rank = 16;
  EXPECT_EQ(resolve(request, gpu_machine()).lora_rank, 16);
  request.lora_rank = 17;
  EXPECT_NE(error_of(request, gpu_machine())
                .find("lora_rank 17 is more than 16, the smaller side "
                      "of test-tiny-llama's 'k' projection"),
            std::string::npos)
      << error_of(request, gpu_machine());
  request.lora_targets = "q,o";
  request.lora_rank = 32;
  EXPECT_EQ(resolve(request, gpu_machine()).lora_rank, 32);
  request.lora_rank = 4096;
  EXPECT_NE(error_of(request, gpu_machine()).find("at most 32"), std::string::npos);
}

// A benchmark file (a suite's child, a rank) goes through resolve() like a command line: the
// request it gives resolves to itself, and a rule it breaks is refused.
TEST(Resolve, ABenchmarkFromElsewhereResolvesToItselfOrIsRefused) {
  for (const std::string model : {"resnet50", "transformerxl-base", "bert-large", "llama-3-8b"}) {
    BenchmarkRequest request;
    request.model = model;
    request.gpus = 2;
    const ResolvedBenchmark resolved = resolve(request, gpu_machine(2));
    EXPECT_EQ(resolve(request_from(resolved), gpu_machine(2)), resolved) << model;
    EXPECT_THROW(resolve(request_from(resolved), gpu_machine(1)), UsageError) << model;
  }
  BenchmarkRequest lora;
  lora.model = "llama-3.2-1b";
  lora.tuning = Tuning::kLora;
  lora.task = Task::kTrain;
  const ResolvedBenchmark tuned = resolve(lora, gpu_machine());
  EXPECT_EQ(resolve(request_from(tuned), gpu_machine()), tuned);
  BenchmarkRequest served;
  served.model = "llama-3-8b";
  served.task = Task::kInfer;
  const ResolvedBenchmark infer = resolve(served, gpu_machine());
  EXPECT_EQ(resolve(request_from(infer), gpu_machine()), infer);
  // A rule the file breaks: BERT-large has 512 positions.
  BenchmarkRequest bert;
  bert.model = "bert-large";
  ResolvedBenchmark too_long = resolve(bert, gpu_machine());
  too_long.seq_len = 1000;
  EXPECT_THROW(resolve(request_from(too_long), gpu_machine()), UsageError);
}

// --optimizer: an optimiser registered by name (src/optim/) instead of the model's recipe's;
// naming the model's own is the model's own benchmark (recorded empty, as older results are).
TEST(Resolve, OptimizerByRegisteredNameAndTheModelsOwnIsTheDefault) {
  BenchmarkRequest request;
  request.model = "resnet50";
  request.optimizer = "adamw";
  EXPECT_EQ(resolve(request, cpu_machine()).optimizer, "adamw");
  request.optimizer = "sgd";
  EXPECT_EQ(resolve(request, cpu_machine()).optimizer, "");
  EXPECT_TRUE(resolve(request, cpu_machine()) == resolve(BenchmarkRequest{}, cpu_machine()));
  request.optimizer = "lamb";
  EXPECT_NE(error_of(request, cpu_machine()).find("unknown optimizer 'lamb'; known: "),
            std::string::npos)
      << error_of(request, cpu_machine());
  request.optimizer = "adamw";
  request.task = Task::kInfer;
  EXPECT_NE(error_of(request, cpu_machine()).find("optimizer is a training setting"),
            std::string::npos);
}

// What a batch probe warms up with: the model's steady state and graph mode's capture.
// --tensor-parallel: each refusal names the value and what is allowed (docs/parallelism.md).
TEST(Resolve, TensorParallelSplitsWhatTheModelDeclaresOverNeighbouringRanks) {
  BenchmarkRequest request;
  request.model = "llama-3.1-70b";
  request.gpus = 8;
  request.tensor_parallel = 4;
  request.batch_size = 1;
  const ResolvedBenchmark resolved = resolve(request, gpu_machine(8));
  EXPECT_EQ(resolved.tensor_parallel, 4);
  // Each rank's slice holds to its device's int4 kernel: on 4 ranks test-tp-llama's k and v
  // slices have 8 rows (the CPU's kernel packs 16, CUDA's 8) and o's 64 inputs are 16.
  BenchmarkRequest infer;
  infer.model = "test-tp-llama";
  infer.task = Task::kInfer;
  infer.gpus = infer.tensor_parallel = 4;
  infer.weights = "int4";
  infer.weight_group = 32;
  // (The LibTorch comes first where it has no int4 kernel: no option fixes it.)
  if (!compat::kHasIntWeights) {
    EXPECT_EQ(error_of(infer, cpu_machine()).rfind("weights int4 needs LibTorch 2.6", 0), 0u);
    BenchmarkRequest on_cpu = infer;
    on_cpu.device = DeviceKind::kCpu;
    ResolvedBenchmark asked = as_requested(on_cpu);
    asked.weight_group = 32;
    EXPECT_THROW(weights::check_int4_shapes(ModelRegistry::instance().get("test-tp-llama"), asked),
                 UsageError);
  } else {
    EXPECT_EQ(error_of(infer, cpu_machine()),
              "weights int4 with weight_group 32: test-tp-llama's [8, 64] weight (a "
              "tensor-parallel rank's slice) cannot be held so: its 8 output features are not a "
              "multiple of 16 (the CPU kernel's rule)");
    EXPECT_EQ(error_of(infer, gpu_machine(4)),
              "weights int4 with weight_group 32: test-tp-llama's [64, 16] weight (a "
              "tensor-parallel rank's slice) cannot be held so: the group size 32 does not divide "
              "its 16 input features");
  }
  request.tensor_parallel = 3;
  EXPECT_EQ(error_of(request, gpu_machine(8)),
            "tensor_parallel 3 does not divide gpus 8: the ranks are tensor-parallel x "
            "data-parallel");
  request.tensor_parallel = 16;
  request.gpus = 16;
  EXPECT_EQ(error_of(request, gpu_machine(16)),
            "tensor_parallel 16 is more than llama-3.1-70b's 8 key/value heads: each rank holds "
            "whole key/value heads (at most 8)");
  request.tensor_parallel = 8;
  request.gpus = 8;
  MachineFacts two_nodes = gpu_machine(4);
  two_nodes.local_ranks = 4;  // a launcher's 4 ranks on this node
  EXPECT_NE(error_of(request, two_nodes).find("tensor_parallel 8 spans nodes: this node runs 4"),
            std::string::npos);
  // 6 ranks on 2 nodes of 3 (hostile input, round 4: accepted, then waited on peers that never
  // came): with tensor_parallel 2, ranks 2 and 3 would be one group on two nodes.
  request.tensor_parallel = 2;
  request.gpus = 6;
  MachineFacts three_a_node = gpu_machine(3);
  three_a_node.local_ranks = 3;
  EXPECT_EQ(error_of(request, three_a_node),
            "tensor_parallel 2 spans nodes: this node runs 3 ranks, which 2 does not divide, so a "
            "group of neighbouring ranks would lie across two nodes; give a divisor of 3");
  request.tensor_parallel = 8;
  request.gpus = 8;
  request.mode = Mode::kGraph;
  EXPECT_EQ(error_of(request, gpu_machine(8)),
            "tensor_parallel 8 runs in eager mode: its all-reduces are not captured in a CUDA "
            "graph (--mode eager)");
  request.mode = std::nullopt;
  request.batch_size = kSearchBatchSize;
  EXPECT_NE(error_of(request, gpu_machine(8)).find("with batch_size max"), std::string::npos);
  request.batch_size = 1;
  request.model = "resnet50";
  request.tensor_parallel = 2;
  EXPECT_NE(error_of(request, gpu_machine(8)).find("tensor_parallel 2: resnet50 does not shard"),
            std::string::npos);
}

// --shard: a model with repeated blocks, fully tuned, alone of the parallelisms, in eager mode,
// training; one group of one is a process group too (docs/parallelism.md).
TEST(Resolve, ShardingTrainsAModelByItsBlocksInEagerMode) {
  BenchmarkRequest request;
  request.model = "llama-3-8b";
  request.gpus = 8;
  request.shard = "full";
  request.batch_size = 1;
  const ResolvedBenchmark resolved = resolve(request, gpu_machine(8));
  EXPECT_TRUE(resolved.sharded());
  for (const auto& [key, text] : identity_settings(resolved)) {
    EXPECT_NE(key, "bucket_mb") << "DDP's buckets do not apply";
  }
  request.gpus = 1;
  EXPECT_TRUE(resolve(request, gpu_machine(1)).runs_process_group());
  request.shard = "none";
  EXPECT_FALSE(resolve(request, gpu_machine(1)).runs_process_group());
  request.shard = "grads";
  request.mode = Mode::kGraph;
  EXPECT_EQ(error_of(request, gpu_machine(8)),
            "shard grads runs in eager mode: its gathers and frees are not captured in a CUDA "
            "graph (--mode eager)");
  request.mode = std::nullopt;
  request.tuning = Tuning::kQlora;
  EXPECT_NE(error_of(request, gpu_machine(8)).find("shard grads with tuning qlora"),
            std::string::npos);
  request.tuning = std::nullopt;
  request.gpus = 2;
  request.tensor_parallel = 2;
  EXPECT_NE(error_of(request, gpu_machine(8)).find("sharding and tensor parallelism together"),
            std::string::npos);
  request.tensor_parallel = std::nullopt;
  request.batch_size = kSearchBatchSize;
  EXPECT_NE(error_of(request, gpu_machine(8)).find("with batch_size max"), std::string::npos);
  request.batch_size = 1;
  request.task = Task::kInfer;
  EXPECT_EQ(error_of(request, gpu_machine(8)), "shard grads is a training setting, not infer's");
  request.task = std::nullopt;
  request.model = "resnet50";
  EXPECT_NE(
      error_of(request, gpu_machine(8)).find("shard grads: resnet50 declares no repeated blocks"),
      std::string::npos);
}

TEST(Resolve, FewestWarmUpStepsAreTheModelsAndTheModes) {
  BenchmarkRequest request;
  request.model = "resnet50";
  EXPECT_EQ(fewest_warmup_steps(resolve(request, gpu_machine())), 1);
  request.model = "test-tiny-transformerxl";  // 8-token segments, 8 of memory: 8 / 8 + 2
  EXPECT_EQ(fewest_warmup_steps(resolve(request, gpu_machine())), 3);
  ResolvedBenchmark graphed = resolve(BenchmarkRequest{}, gpu_machine());
  graphed.mode = Mode::kGraph;
  EXPECT_EQ(fewest_warmup_steps(graphed), kGraphCaptureWarmupSteps);
  graphed.task = Task::kInfer;
  EXPECT_EQ(fewest_warmup_steps(graphed), 1);
}

}  // namespace
}  // namespace gpubench
