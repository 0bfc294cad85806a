// The fine-tuning models through the binary: the CPU suite end to end, what a result records,
// the bad inputs, and a run that cannot fit refused as an oom result before it allocates.
#include <fstream>

#include <gtest/gtest.h>

#include "forked_cli.h"
#include "test_helpers.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

using testing::expect_refused;
using testing::read_json;
using testing::run_command;
using testing::run_gpubench;
using testing::ScratchDirectory;

TEST(FineTuningCli, TheCpuSuiteRunsEveryRecipeAndRecordsIt) {
  ScratchDirectory dir("finetune-suite");
  const auto run = run_gpubench("--log-level warn run " + std::string(GPUBENCH_SOURCE_DIR) +
                                "/configs/finetune-cpu.yaml --output " + dir.path());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto files = dir.files_with_extension(".json");
  ASSERT_EQ(files.size(), 9u) << run.output;
  int lora = 0, checkpointed = 0;
  for (const std::string& file : files) {
    const nlohmann::json r = read_json(file);
    const auto& b = r["benchmark"];
    const auto& m = r["metrics"];
    EXPECT_EQ(r["status"], "ok") << file;
    EXPECT_GT(m["throughput"].get<double>(), 0) << file;
    EXPECT_GT(m["tokens_per_second"].get<double>(), 0) << file;
    EXPECT_GT(m["sequences_per_second"].get<double>(), 0) << file;
    EXPECT_EQ(b["optimizer"], "AdamW betas (0.9, 0.999), eps 1e-08, weight decay 0.01") << file;
    EXPECT_EQ(b["params"].get<int64_t>(),
              b["trainable_params"].get<int64_t>() + b["frozen_params"].get<int64_t>());
    const bool bert = b["model"] == "test-tiny-bert";
    EXPECT_EQ(m["throughput_unit"], bert ? "sequences/sec" : "tokens/sec") << file;
    // Per step: batch x (tokens for Llama, sequences for BERT) samples.
    const int64_t samples = 2 * (bert ? 1 : b["seq_len"].get<int64_t>());
    if (b["tuning"] == "lora") {
      ++lora;
      EXPECT_GT(b["frozen_params"].get<int64_t>(), 0) << file;
      EXPECT_LT(b["trainable_params"].get<int64_t>(), b["frozen_params"].get<int64_t>()) << file;
      EXPECT_GT(b["lora_rank"].get<int>(), 0) << file;
      // No weight gradients for the frozen base.
      EXPECT_LT(m["train_flops_per_step"].get<int64_t>(),
                3 * m["forward_flops_per_sample"].get<int64_t>() * samples)
          << file;
    } else {
      EXPECT_EQ(b["frozen_params"], 0) << file;
      EXPECT_EQ(b["lora_rank"], 0) << file;
      EXPECT_EQ(b["lora_targets"], "") << file;
      EXPECT_EQ(m["train_flops_per_step"].get<int64_t>(),
                3 * m["forward_flops_per_sample"].get<int64_t>() * samples)
          << file;
    }
    if (b["activation_checkpointing"] == true) {
      ++checkpointed;
      EXPECT_EQ(b["lora_targets"], "all-linear");
      EXPECT_EQ(b["seq_len"], 32);
    }
  }
  EXPECT_EQ(lora, 5);
  EXPECT_EQ(checkpointed, 1);
}

// Two CPU ranks under LoRA in bf16: the bf16 base is broadcast (Gloo has no bfloat16: sent as
// bytes), and only the adapters' gradients are all-reduced.
TEST(FineTuningCli, LoraRanksAllReduceOnlyTheAdapters) {
  ScratchDirectory dir("finetune-ranks");
  const auto run = run_gpubench(
      "--log-level warn train --model test-tiny-llama --tuning lora --precision bf16 --device cpu "
      "--gpus 2 --threads 1 --warmup-steps 1 --steps 2 --repeat 1 --output " +
      dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["distributed"]["world_size"], 2);
  EXPECT_EQ(r["distributed"]["gradient_bytes"].get<int64_t>(),
            4 * r["benchmark"]["trainable_params"].get<int64_t>());
  EXPECT_GT(r["benchmark"]["frozen_params"].get<int64_t>(), 0);
}

TEST(FineTuningCli, BadFineTuningSettingsAreOneClearLine) {
  ScratchDirectory dir("finetune-bad");
  const std::string out = " --output " + dir.path();
  expect_refused("train --model resnet50 --tuning lora" + out,
                 "--tuning 'lora' applies to the fine-tuning models (bert-large, gpt-oss-120b, "
                 "gpt-oss-20b, llama-2-7b, "
                 "llama-3-8b, llama-3.1-405b, llama-3.1-70b, llama-3.1-8b, llama-3.2-1b); "
                 "'resnet50' trains in full only");
  expect_refused("train --model bert-large --seq-len 0" + out,
                 "--seq-len must be an integer from 1 to 1048576, got 0");
  expect_refused("train --model bert-large --seq-len 1024" + out,
                 "--seq-len 1024 is more than bert-large's 512 positions");
  expect_refused("train --model llama-3-8b --tuning lora --lora-targets q,gate_proj" + out,
                 "--lora-targets 'q,gate_proj': 'gate_proj' is not a projection of llama-3-8b");
  expect_refused("train --model llama-3-8b --lora-rank 8" + out,
                 "--lora-rank applies to tuning 'lora' and 'qlora' only");
  expect_refused("train --model llama-3-8b --tuning lora --lora-rank 0" + out,
                 "--lora-rank must be an integer from 1 to 65536, got 0");
  expect_refused("train --model llama-3-8b --tuning dora" + out,
                 "--tuning must be one of full, lora, qlora, got 'dora'");
  expect_refused("train --model resnet50 --tuning qlora" + out,
                 "--tuning 'qlora' applies to the fine-tuning models");
  if (compat::kHasFp8) {  // else fp8 is refused first, for the LibTorch
    expect_refused("train --model llama-3-8b --tuning qlora --precision fp8" + out,
                   "--tuning 'qlora' holds the frozen weights in NF4");
  }
  expect_refused("infer --model llama-3-8b --tuning qlora" + out,
                 "tuning 'lora' and 'qlora' and --activation-checkpointing are training settings");
  expect_refused("train --model vgg16 --activation-checkpointing" + out,
                 "--activation-checkpointing applies to the transformer models");
}

// The command, on a machine without the memory for it: an oom result that says what it
// needed, before the 8B model is built; exit 1, and in a suite the next benchmark still runs.
TEST(FineTuningCli, ARunThatCannotFitIsAnOomResultBeforeItAllocates) {
  ScratchDirectory dir("finetune-oom");
  const std::string train = std::string(GPUBENCH_BINARY) +
                            " train --device cpu --model llama-3-8b --tuning lora --precision "
                            "bf16 --seq-len 2048 --output " +
                            dir.file("r.json");
  const auto built = run_command("GPUBENCH_HOST_MEMORY=8G " + train);
  EXPECT_EQ(built.exit_code, 1) << built.output;
  nlohmann::json r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "oom");
  EXPECT_EQ(r["error"],
            "out of memory before the run: llama-3-8b (lora, bf16) is built on the host, 15.0 GiB "
            "of weights, and the host has 8.0 GiB available");
  const auto activations = run_command("GPUBENCH_HOST_MEMORY=20G " + train);
  EXPECT_EQ(activations.exit_code, 1) << activations.output;
  r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "oom");
  EXPECT_NE(
      r["error"].get<std::string>().find(
          "needs 15.2 GiB for weights, gradients and optimiser state and about 30.9 GiB of "
          "activations at batch 1, seq 2048 (estimated), and the host has 20.0 GiB available"),
      std::string::npos)
      << r["error"];
  EXPECT_EQ(r["benchmark"]["trainable_params"], 13631488);  // r16 on q, k, v, o of 32 blocks

  const std::string suite = dir.file("suite.yaml");
  std::ofstream(suite) << "defaults: {device: cpu, warmup_steps: 1, steps: 1, repeat: 1}\n"
                          "benchmarks:\n"
                          "  - {model: llama-2-7b, tuning: full}\n"
                          "  - {model: test-tiny-llama, batch_size: 1, seq_len: 8}\n";
  const auto run = run_command("GPUBENCH_HOST_MEMORY=8G " + std::string(GPUBENCH_BINARY) +
                               " --log-level warn run " + suite + " --output " + dir.file("out"));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("2 benchmark(s), 1 failed"), std::string::npos) << run.output;
  const auto bad = run_command("GPUBENCH_HOST_MEMORY=lots " + train);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("GPUBENCH_HOST_MEMORY"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace gpubench
