// gpubench infer through the binary: a batch list gives one result per batch, generation's
// figures in the file, a suite entry with task infer, inference results in report and compare,
// and the bad inputs (exit 2, one line).
#include <gtest/gtest.h>

#include <fstream>

#include "forked_cli.h"
#include "test_helpers.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

using testing::expect_refused;
using testing::read_json;
using testing::run_gpubench;
using testing::ScratchDirectory;

const char* kShort = " --device cpu --warmup-steps 1 --steps 2 --repeat 2";

TEST(InferCli, ABatchListGivesOneResultPerBatch) {
  ScratchDirectory dir("infer-batches");
  const auto run = run_gpubench("infer --model test-tiny-cnn --batch-size 1,3" +
                                std::string(kShort) + " --output " + dir.path());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto files = dir.files_with_extension(".json");
  ASSERT_EQ(files.size(), 2u) << run.output;
  std::set<int64_t> batches;
  for (const std::string& file : files) {
    const auto r = read_json(file);
    EXPECT_EQ(r["status"], "ok");
    EXPECT_EQ(r["benchmark"]["task"], "infer");
    EXPECT_EQ(r["metrics"]["inference"]["request_latency_ms"]["count"], 4);
    batches.insert(r["benchmark"]["batch_size_per_device"].get<int64_t>());
  }
  EXPECT_EQ(batches, (std::set<int64_t>{1, 3}));
  EXPECT_NE(run.output.find("latency per request: p50"), std::string::npos) << run.output;
  // One table for the sweep, after its batches, holding both.
  const size_t header = run.output.find("model ");
  ASSERT_NE(header, std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("\nmodel ", header + 1), std::string::npos) << run.output;
  const std::string table = run.output.substr(header);
  EXPECT_NE(table.find("test-tiny-cnn  fp32       cpu x1  1 "), std::string::npos) << run.output;
  EXPECT_NE(table.find("test-tiny-cnn  fp32       cpu x1  3 "), std::string::npos) << run.output;
}

TEST(InferCli, GenerationRecordsDecodeRateAndTheCache) {
  ScratchDirectory dir("infer-generate");
  const auto run = run_gpubench(
      "infer --model test-tiny-llama --batch-size 2 --prompt-len 8 "
      "--gen-len 4 --tpot-target-ms 100000" +
      std::string(kShort) + " --output " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  const auto& m = r["metrics"]["inference"];
  EXPECT_EQ(r["metrics"]["throughput_unit"], "tokens/sec");
  EXPECT_DOUBLE_EQ(r["metrics"]["throughput"].get<double>(),
                   m["decode_tokens_per_second"].get<double>());
  EXPECT_GT(m["prefill_tokens_per_second"].get<double>(), 0);
  EXPECT_EQ(m["time_per_output_token_ms"]["count"], 2 * 2 * 3);
  EXPECT_GT(m["kv_cache_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(m["kv_cache_reallocated"], false);
  EXPECT_EQ(m["kv_cache_converted_per_step"], false);
  EXPECT_FALSE(m.contains("kernels_per_decode_step")) << "eager on the CPU: no graph counted it";
  EXPECT_EQ(r["benchmark"]["prompt_len"], 8);
  EXPECT_EQ(r["benchmark"]["gen_len"], 4);
  EXPECT_NE(run.output.find("time per output token: p50"), std::string::npos) << run.output;
  // The decode ceiling from the CPU's measured copy (docs/inference.md#the-decode-ceiling).
  const double bandwidth = r["system"]["cpu_memory_bandwidth_gbs"].get<double>();
  EXPECT_GT(bandwidth, 0);
  EXPECT_EQ(m["ceiling_bandwidth_source"], "measured (CPU copy)");
  EXPECT_DOUBLE_EQ(m["ceiling_bandwidth_gbs"].get<double>(), bandwidth);
  const auto bytes = m["bytes_per_decoded_token"].get<int64_t>();
  // Its weights' share, and its sequence's cache at the mean context 8 + 4 / 2.
  EXPECT_EQ(bytes, m["weight_bytes_per_decoded_token"].get<int64_t>() +
                       10 * m["kv_cache_bytes_per_token"].get<int64_t>());
  EXPECT_NEAR(m["decode_ceiling_tokens_per_second"].get<double>(), bandwidth * 1e9 / bytes,
              1e-6 * bandwidth * 1e9 / bytes);
  EXPECT_NE(run.output.find("decode ceiling: "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("time per output token target 100000.00 ms at p99: the largest batch "
                            "that meets it is batch 2"),
            std::string::npos)
      << run.output;
}

// Off a terminal, each trial's line gives the trial's rate as the result records it (generation's
// lines once read 0.0 tokens/sec beside the table's figures).
TEST(InferCli, EachTrialsProgressLineIsTheTrialTheResultRecords) {
  ScratchDirectory dir("infer-progress");
  const auto run = run_gpubench(
      "--log-level info infer --model test-tiny-llama --batch-size 1 "
      "--prompt-len 8 --gen-len 4" +
      std::string(kShort) + " --output " + dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto trials = read_json(dir.file("r.json"))["metrics"]["trials"];
  ASSERT_EQ(trials.size(), 2u);
  for (size_t i = 0; i < trials.size(); ++i) {
    char expected_text[96];
    std::snprintf(expected_text, sizeof(expected_text),
                  "trial %zu/2 done (2 steps)  %.1f tokens/sec", i + 1, trials[i].get<double>());
    const std::string expected = expected_text;
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
    // The first trial's line says the time left (from its second step's pace); the last's ends.
    const std::string after = i == 0 ? ", " : "\n";
    EXPECT_NE(run.output.find(expected + after), std::string::npos) << expected << run.output;
  }
  EXPECT_NE(run.output.find(" left\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("warm-up done (1 step)\n"), std::string::npos) << run.output;
}

TEST(InferCli, ASuiteEntryWithTaskInferRunsInference) {
  ScratchDirectory dir("infer-suite");
  std::ofstream(dir.file("suite.yaml"))
      << "defaults: {device: cpu, batch_size: 2, warmup_steps: 0, steps: 1, repeat: 1}\n"
         "benchmarks:\n  - model: test-tiny-cnn\n    task: [train, infer]\n";
  const auto run = run_gpubench("run " + dir.file("suite.yaml") + " --output " + dir.file("out"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::set<std::string> tasks;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("out"))) {
    const auto r = read_json(entry.path().string());
    EXPECT_EQ(r["status"], "ok") << r.dump();
    tasks.insert(r["benchmark"]["task"].get<std::string>());
    EXPECT_EQ(r["metrics"].contains("inference"), r["benchmark"]["task"] == "infer");
  }
  EXPECT_EQ(tasks, (std::set<std::string>{"train", "infer"}));
  // report: training and inference of one model are two rows; the latency table is there.
  const auto report = run_gpubench("report " + dir.file("out"));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("Inference latency per request"), std::string::npos)
      << report.output;
  EXPECT_NE(report.output.find("inference"), std::string::npos) << report.output;
  // compare against itself: the latency table beside the throughput one.
  const auto compare =
      run_gpubench("compare " + dir.file("out") + " " + dir.file("out") + " --format markdown");
  ASSERT_EQ(compare.exit_code, 0) << compare.output;
  EXPECT_NE(compare.output.find("Inference latency"), std::string::npos) << compare.output;
  // regress: each task against its own baseline.
  const auto regress =
      run_gpubench("regress --baseline " + dir.file("out") + " --current " + dir.file("out"));
  EXPECT_EQ(regress.exit_code, 0) << regress.output;
}

TEST(InferCli, BadInputIsOneLineAndExitTwo) {
  expect_refused("infer --model test-tiny-cnn --device cpu --batch-size 1,0,8",
                 "--batch-size must be an integer from 1 to 1048576");
  expect_refused("infer --model test-tiny-cnn --device cpu --batch-size 1,,8",
                 "has an empty entry");
  expect_refused("infer --model test-tiny-cnn --device cpu --batch-size max",
                 "infer takes batch sizes");
  expect_refused("infer --model test-tiny-llama --device cpu --prompt-len 60 --gen-len 8",
                 "--prompt-len 60 + --gen-len 8 is more than test-tiny-llama's 64 positions");
  expect_refused("infer --model test-tiny-llama --device cpu --gen-len 1",
                 "--gen-len must be at least 2");
  expect_refused("infer --model transformerxl-base --device cpu",
                 "'transformerxl-base' has no inference path in gpubench");
  expect_refused("infer --model test-tiny-cnn --device cpu --gen-len 8",
                 "--prompt-len and --gen-len apply to the models that generate text");
  expect_refused("infer --model test-tiny-llama --device cpu --seq-len 16",
                 "--seq-len does not apply to infer");
  expect_refused("infer --model test-tiny-cnn --device cpu --tpot-target-ms 40",
                 "--tpot-target-ms applies to the models that generate text");
  expect_refused("infer --model test-tiny-cnn --device cpu --weights int4",
                 "--weights 'int4' applies to the models that hold integer weights");
  // The model's shapes after LibTorch's kernels, which no option fixes.
  expect_refused("infer --model test-tiny-llama --device cpu --weights int4 --weight-group 64",
                 compat::kHasIntWeights ? "the group size 64 does not divide its 32 input features"
                                        : "weights int4 needs LibTorch 2.6 or later");
  expect_refused("train --model test-tiny-llama --device cpu --weights int8",
                 "--weights 'int8' applies to gpubench infer");
  expect_refused("infer --model test-tiny-cnn --device cpu --gpus 2 --batch-size max",
                 "infer takes batch sizes");
  expect_refused("infer --model test-tiny-cnn --device cpu --mode graph",
                 "graph mode needs a CUDA device");
  expect_refused("infer --model test-tiny-cnn --device cpu --batch-size 1,2 -o x.json",
                 "names one file");
  expect_refused("train --model test-tiny-llama --device cpu --gen-len 8",
                 "--prompt-len and --gen-len apply to inference");
}

// infer refuses up front, as train does, what cannot fit: weights (in the dtype it builds them
// in) larger than the host, before the model is built; a key/value cache that does not fit
// beside the weights, before it is allocated. Each an oom result with the figures, exit 1.
// llama-3.1-405b on a 64 GB host: refused in well under a second, no weight allocated.
TEST(InferCli, WhatCannotFitIsRefusedBeforeItIsAllocated) {
  ScratchDirectory dir("infer-refused");
  const std::string infer = std::string(GPUBENCH_BINARY) +
                            " infer --device cpu --model test-tiny-llama --batch-size 64 "
                            "--prompt-len 32 --gen-len 32 --output ";
  const auto weights = testing::run_command("GPUBENCH_TEST_HOOKS=1 GPUBENCH_HOST_MEMORY=100K " +
                                            infer + dir.file("weights.json"));
  EXPECT_EQ(weights.exit_code, 1) << weights.output;
  nlohmann::json r = read_json(dir.file("weights.json"));
  EXPECT_EQ(r["status"], "oom");
  EXPECT_EQ(r["error"],
            "out of memory before the run: test-tiny-llama is built on the host, 136.6 KiB of "
            "weights in fp32, and the host has 100.0 KiB available");
  EXPECT_EQ(r["metrics"]["memory"]["basis"], "planned");
  const auto cache = testing::run_command("GPUBENCH_TEST_HOOKS=1 GPUBENCH_HOST_MEMORY=1M " + infer +
                                          dir.file("cache.json"));
  EXPECT_EQ(cache.exit_code, 1) << cache.output;
  r = read_json(dir.file("cache.json"));
  EXPECT_EQ(r["status"], "oom");
  EXPECT_EQ(r["error"],
            "out of memory before the run: test-tiny-llama holds 136.6 KiB of weights and needs "
            "1.0 MiB of key/value cache for batch 64 x 64 tokens, and the host has 1.0 MiB (a "
            "smaller batch, a shorter context or --kv-cache fp8 needs less)");
  EXPECT_EQ(r["metrics"]["memory"]["other"], 1 << 20);
  const auto huge =
      testing::run_command("GPUBENCH_HOST_MEMORY=64G " + std::string(GPUBENCH_BINARY) +
                           " infer --device cpu --model llama-3.1-405b "
                           "--batch-size 1 --prompt-len 16 --gen-len 4 --output " +
                           dir.file("405b.json"));
  EXPECT_EQ(huge.exit_code, 1) << huge.output;
  EXPECT_NE(read_json(dir.file("405b.json"))["error"].get<std::string>().find(
                "llama-3.1-405b is built on the host, 1511.9 GiB of weights in fp32"),
            std::string::npos);
}

}  // namespace
}  // namespace gpubench
