// Through the binary: what an fp8 run records (docs/fp8.md).
#include <gtest/gtest.h>

#include "forked_cli.h"
#include "test_helpers.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

// Through the binary: what an fp8 run records (and the schema check after the suite validates),
// and the Debian build's refusal of both settings.
TEST(Fp8Cli, TrainingAndGenerationRecordTheRecipeTheShareAndTheBytes) {
  testing::ScratchDirectory dir("fp8-cli");
  const std::string tiny =
      " --device cpu --model test-tiny-llama --batch-size 2 --warmup-steps 1 "
      "--steps 2 --repeat 1 --log-level warn";
  const std::string generation = " --prompt-len 16 --gen-len 8";
  if (!compat::kHasFp8) {
    testing::expect_refused("train --precision fp8" + tiny, "needs LibTorch 2.5 or later");
    testing::expect_refused("infer --kv-cache fp8" + tiny + generation,
                            "--kv-cache fp8 needs LibTorch 2.5 or later");
    return;
  }
  const auto trained =
      testing::run_gpubench("train --precision fp8 --fp8-recipe rowwise --seq-len 16" + tiny +
                            " --output " + dir.file("train.json"));
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const nlohmann::json t = testing::read_json(dir.file("train.json"));
  EXPECT_EQ(t["status"], "ok");
  EXPECT_EQ(t["benchmark"]["precision"], "fp8");
  EXPECT_EQ(t["benchmark"]["fp8_recipe"], "rowwise");
  const double share = t["metrics"]["fp8_matmul_flop_share"].get<double>();
  EXPECT_GT(share, 0.8);  // every projection and the head; attention's products are the rest
  EXPECT_LT(share, 1.0);
  // BERT (its 2-way head, the pooler at batch 2 and a vocabulary of 200 stay bf16) and
  // Transformer-XL (its adaptive softmax in float32) train in fp8 too.
  for (const auto& [model, extra] :
       {std::pair{"test-tiny-bert", " --seq-len 16"}, {"test-tiny-transformerxl", ""}}) {
    const std::string file = dir.file(std::string(model) + ".json");
    const auto run = testing::run_gpubench("train --precision fp8 --device cpu --model " +
                                           std::string(model) + extra +
                                           " --batch-size 2 --warmup-steps 3 --steps 2 --repeat 1 "
                                           "--log-level warn --output " +
                                           file);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const double model_share = testing::read_json(file)["metrics"]["fp8_matmul_flop_share"];
    EXPECT_GT(model_share, 0.3) << model;
    EXPECT_LT(model_share, 1.0) << model;
  }
  // 3 tokens a step: no weight gradient's product can run in FP8, so nothing did; the run
  // fails rather than report bf16 as fp8.
  const auto odd = testing::run_gpubench(
      "train --precision fp8 --device cpu --model "
      "test-tiny-llama --seq-len 3 --batch-size 1 --warmup-steps "
      "1 --steps 1 --repeat 1 --log-level warn --output " +
      dir.file("odd.json"));
  EXPECT_EQ(odd.exit_code, 1) << odd.output;
  const nlohmann::json failed = testing::read_json(dir.file("odd.json"));
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_NE(
      failed["error"].get<std::string>().find("none of test-tiny-llama's products ran in FP8"),
      std::string::npos)
      << failed["error"];
  auto generate = [&](const std::string& settings, const std::string& file) {
    const auto run = testing::run_gpubench("infer" + settings + tiny + generation + " --output " +
                                           dir.file(file));
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return testing::read_json(dir.file(file))["metrics"]["inference"];
  };
  const nlohmann::json bf16 = generate(" --precision bf16", "bf16.json");
  const nlohmann::json fp8 = generate(" --precision fp8 --kv-cache fp8", "fp8.json");
  // e4m3 weights and scales against bf16's: a little over half the bytes a decoded token reads.
  // The stacked q, k, v and gate, up keep a float32 scale a row for the decode step's product:
  // 4 bytes over a row of 64 codes in this tiny Llama (0.1 % of a row in Llama 3.1 8B).
  const int64_t bf16_bytes = bf16["weight_bytes_per_decoded_token"].get<int64_t>();
  const int64_t fp8_bytes = fp8["weight_bytes_per_decoded_token"].get<int64_t>();
  EXPECT_GT(fp8_bytes, bf16_bytes / 2);
  EXPECT_LT(fp8_bytes, bf16_bytes / 2 * (1 + 4.0 / 64));
  EXPECT_EQ(2 * fp8["kv_cache_bytes"].get<int64_t>(), bf16["kv_cache_bytes"].get<int64_t>());
  // On the CPU the FP8 cache is converted for attention at every decode step (the composition),
  // and the result says so.
  EXPECT_EQ(fp8["kv_cache_converted_per_step"], true);
  EXPECT_EQ(bf16["kv_cache_converted_per_step"], false);
}

}  // namespace
}  // namespace gpubench
