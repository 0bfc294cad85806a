// gpubench scale (docs/scaling.md): predictions from a real single-device result in every
// format, on named, datasheet and measured fabrics; bad input refused in one line; and what the
// accuracy check against CPU ranks (scripts/check-scale-ranks.sh, not a test: it times) reads.
#include <fstream>

#include <gtest/gtest.h>

#include "forked_cli.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::expect_refused;
using testing::read_json;
using testing::run_gpubench;
using testing::ScratchDirectory;

const std::string kOneRank =
    "train --model test-tiny-cnn --device cpu --batch-size 2 --warmup-steps 1 --steps 4 "
    "--repeat 1 --output ";

nlohmann::json scale_json(const std::string& arguments) {
  const auto run = run_gpubench("scale " + arguments + " -f json");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  return nlohmann::json::parse(run.output);
}

TEST(ScaleCli, PredictsEveryWorldSizeOnEachFabricInEveryFormat) {
  ScratchDirectory dir("scale-formats");
  ASSERT_EQ(run_gpubench(kOneRank + dir.file("one.json")).exit_code, 0);
  const auto p = scale_json(dir.file("one.json") + " --compare-fabrics");
  EXPECT_EQ(p["schema"], "gpubench.scale/1");
  EXPECT_EQ(p["basis"], "predicted");
  ASSERT_EQ(p["fabrics"].size(), 3u);
  for (const auto& line : p["fabrics"]) {
    ASSERT_EQ(line["points"].size(), 6u) << "2, 4, 8, 16, 64, 1024";
    double previous = 1.0;
    for (const auto& point : line["points"]) {
      const double efficiency = point["efficiency"].get<double>();
      EXPECT_GT(efficiency, 0);
      EXPECT_LE(efficiency, previous + 1e-12) << "more GPUs never scale better in this model";
      previous = efficiency;
    }
    EXPECT_EQ(line["points"][3]["nodes"], 2);
    EXPECT_NE(line["points"][5]["algorithm"].get<std::string>().find("hierarchical"),
              std::string::npos);
  }
  // NVLink 4 moves the same buckets faster than PCIe Gen4.
  EXPECT_LT(p["fabrics"][2]["points"][2]["allreduce_ms"].get<double>(),
            p["fabrics"][0]["points"][2]["allreduce_ms"].get<double>());
  for (const char* format : {"markdown", "csv", "html"}) {
    const auto run = run_gpubench("scale " + dir.file("one.json") +
                                  " --fabric A100-80GB-SXM --gpus 2,8 -f " + format);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("redicted"), std::string::npos) << format;
  }
  const auto html = run_gpubench("scale " + dir.file("one.json") + " --compare-fabrics -f html");
  EXPECT_NE(html.output.find("<svg"), std::string::npos);
  EXPECT_NE(html.output.find("<polyline"), std::string::npos);
}

TEST(ScaleCli, AnAcceleratorsOwnLinkAndARescaledThroughput) {
  ScratchDirectory dir("scale-datasheet");
  ASSERT_EQ(run_gpubench(kOneRank + dir.file("one.json")).exit_code, 0);
  const auto p = scale_json(dir.file("one.json") +
                            " --fabric L40S --fabric A100-80GB-SXM --gpus 8,16 --throughput 100");
  EXPECT_EQ(p["input"]["throughput"], 100.0);
  EXPECT_NE(p["fabrics"][0]["source"].get<std::string>().find("PCIe Gen4"), std::string::npos);
  EXPECT_NE(p["fabrics"][1]["source"].get<std::string>().find("NVLink"), std::string::npos);
  EXPECT_EQ(p["fabrics"][0]["left_out_gpus"], nlohmann::json::array({16}))
      << "no network named: one node only";
  EXPECT_NEAR(p["fabrics"][0]["points"][0]["throughput"].get<double>(),
              800 * p["fabrics"][0]["points"][0]["efficiency"].get<double>(), 1e-6);
}

TEST(ScaleCli, BadInputIsOneClearLine) {
  ScratchDirectory dir("scale-bad");
  ASSERT_EQ(run_gpubench(kOneRank + dir.file("one.json")).exit_code, 0);
  const std::string one = dir.file("one.json");
  expect_refused("scale " + one, "name the fabric with --fabric");
  expect_refused("scale " + one + " --fabric intra=warp9", "intra=warp9 is neither");
  expect_refused("scale " + one + " --fabric intra=nvlink4,inter=ib400x0", "NICs a node");
  expect_refused("scale " + one + " --fabric nvlink4 --gpus 0", "--gpus");
  expect_refused("scale " + one + " --fabric nvlink4 -f pdf", "pdf");
  // Given empty, a parallelism once gave the data-parallel prediction (hostile input, round 4).
  expect_refused("scale " + one + " --fabric nvlink4 --tensor-parallel ''",
                 "--tensor-parallel: must not be empty: give ranks such as 2,4,8");
  expect_refused("scale " + one + " --fabric nvlink4 --expert-parallel ''",
                 "--expert-parallel: must not be empty: give ranks such as 2,4,8");
  expect_refused("scale " + one + " --fabric nvlink4 --shard ''",
                 "--shard: must not be empty: give full or grads");
  // A file the reader accepts but no single-device run writes (hostile input, round 4).
  const auto edited = [&](const std::string& name, const char* key, int64_t value) {
    nlohmann::json r = read_json(one);
    r["benchmark"][key] = value;
    std::ofstream(dir.file(name)) << r.dump();
    return dir.file(name);
  };
  expect_refused("scale " + edited("max.json", "batch_size_per_device", -1) + " --fabric nvlink4",
                 "records batch_size_per_device -1: a measured run has a batch of 1 or more");
  expect_refused("scale " + edited("tp.json", "tensor_parallel", 2) + " --fabric nvlink4",
                 "records gpus 1, tensor_parallel 2 and expert_parallel 1: scale predicts from a "
                 "single-device result (each 1)");
  ASSERT_EQ(run_gpubench(kOneRank + dir.file("off.json") + " --no-timeline").exit_code, 0);
  expect_refused("scale " + dir.file("off.json") + " --fabric nvlink4", "no backward timeline");
}

// The run's rule on the model's split, from the splits the result records (8 query heads, 4
// key/value heads, 128 intermediate): what train refuses is not predicted (hostile input, round
// 4, cause 7).
TEST(ScaleCli, TensorParallelSplitsTheRunRefusesAreNotPredicted) {
  ScratchDirectory dir("scale-tp-rule");
  const auto run = run_gpubench(
      "train --model test-tp-llama --device cpu --batch-size 2 --seq-len 16 --warmup-steps 1 "
      "--steps 2 --repeat 1 --output " +
      dir.file("llama.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(read_json(dir.file("llama.json"))["benchmark"]["model_tensor_parallel_splits"][0],
            (nlohmann::json{{"of", "key/value heads"}, {"count", 4}}));
  expect_refused("scale " + dir.file("llama.json") + " --fabric nvlink4 --tensor-parallel 3",
                 "tensor_parallel 3 does not divide test-tp-llama's 4 key/value heads");
  expect_refused("scale " + dir.file("llama.json") + " --fabric nvlink4 --tensor-parallel 2,8",
                 "tensor_parallel 8 is more than test-tp-llama's 4 key/value heads");
  expect_refused("train --model test-tp-llama --device cpu --gpus 8 --tensor-parallel 8",
                 "--tensor-parallel 8 is more than test-tp-llama's 4 key/value heads");
  // A result of a model that does not shard, though it records a transformer's shape.
  nlohmann::json unsharded = read_json(dir.file("llama.json"));
  unsharded["benchmark"]["model_tensor_parallel_splits"] = nlohmann::json::array();
  std::ofstream(dir.file("unsharded.json")) << unsharded.dump();
  expect_refused("scale " + dir.file("unsharded.json") + " --fabric nvlink4 --tensor-parallel 2",
                 "does not shard");
}

// --tensor-parallel: one replica over T ranks of a node, from a Llama's single-device result;
// a result without a transformer's shape, and a format without a table for it, are refused; and
// --shard from the same result.
TEST(ScaleCli, TensorParallelAndShardedPredictionsOfALlamasStep) {
  ScratchDirectory dir("scale-tp");
  const auto run = run_gpubench(
      "train --model test-tp-llama --device cpu --batch-size 2 --seq-len 16 --warmup-steps 1 "
      "--steps 4 --repeat 1 --output " +
      dir.file("llama.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto p = scale_json(dir.file("llama.json") +
                            " --tensor-parallel 1,2,4,16 --fabric intra=pcie4 --fabric nvlink4");
  EXPECT_EQ(p["schema"], "gpubench.scale-tp/1");
  EXPECT_EQ(p["basis"], "predicted");
  EXPECT_EQ(p["input"]["hidden_size"], 64);
  EXPECT_EQ(p["input"]["blocks"], 2);
  ASSERT_EQ(p["fabrics"].size(), 2u);
  for (const auto& line : p["fabrics"]) {
    ASSERT_EQ(line["points"].size(), 3u) << "1, 2 and 4; 16 is more than a node";
    EXPECT_EQ(line["left_out_ranks"], nlohmann::json::array({16}));
    EXPECT_EQ(line["points"][1]["collectives"], 4 * 2 + 2);
    EXPECT_EQ(line["points"][1]["activation_bytes"], 2 * 16 * 64 * 4);
  }
  // NVLink 4 carries the same all-reduces sooner than PCIe Gen4.
  EXPECT_LT(p["fabrics"][1]["points"][2]["allreduce_ms"].get<double>(),
            p["fabrics"][0]["points"][2]["allreduce_ms"].get<double>());
  // A generation's decode step: 2 all-reduces a block, the embedding's and the logits' gather.
  const auto generated = run_gpubench(
      "infer --model test-tp-llama --device cpu --batch-size 2 --prompt-len 8 --gen-len 4 "
      "--warmup-steps 1 --steps 2 --repeat 1 --output " +
      dir.file("generated.json"));
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  const auto decode =
      scale_json(dir.file("generated.json") + " --tensor-parallel 2 --fabric nvlink4");
  EXPECT_EQ(decode["input"]["decode"], true);
  EXPECT_EQ(decode["fabrics"][0]["points"][0]["collectives"], 2 * 2 + 2);
  EXPECT_EQ(decode["fabrics"][0]["points"][0]["activation_bytes"], 2 * 64 * 4);
  expect_refused("scale " + dir.file("generated.json") + " --fabric nvlink4 --gpus 2",
                 "is not a training run");
  expect_refused("scale " + dir.file("generated.json") +
                     " --fabric nvlink4 --tensor-parallel 2 --throughput 5",
                 "a generation's decode step is predicted as measured");
  ASSERT_EQ(run_gpubench(kOneRank + dir.file("cnn.json")).exit_code, 0);
  expect_refused("scale " + dir.file("cnn.json") + " --fabric nvlink4 --tensor-parallel 2",
                 "records no transformer shape");
  expect_refused(
      "scale " + dir.file("llama.json") + " --fabric nvlink4 --tensor-parallel 2 -f html",
      "with --tensor-parallel is not one of markdown, csv, json");
  expect_refused("scale " + dir.file("llama.json") + " --fabric nvlink4 --tensor-parallel 0",
                 "--tensor-parallel");
  // --shard full from the same result: its 2 blocks and the rest, float32 (4 bytes an element).
  // On 2 GPUs a rank sends half of each gathered unit (the root once, each block twice) and of
  // each reduce-scattered one; DDP's ring all-reduce sends all of the gradients once.
  const auto sharded =
      scale_json(dir.file("llama.json") + " --shard full --gpus 2 --fabric nvlink4");
  EXPECT_EQ(sharded["schema"], "gpubench.scale-shard/1");
  EXPECT_EQ(sharded["basis"], "predicted");
  EXPECT_EQ(sharded["input"]["blocks"], 2);
  const int64_t block = sharded["input"]["block_params"], root = sharded["input"]["root_params"];
  EXPECT_EQ(block, 36992);  // q 64x64, k and v 64x32, o 64x64, gate, up and down 64x128, 2 norms
  EXPECT_EQ(root, 2 * 256 * 64 + 64);
  const auto& point = sharded["fabrics"][0]["points"][0];
  EXPECT_EQ(point["sent_bytes"], 4 * (root + 2 * 2 * block) / 2 + 4 * (2 * block + root) / 2);
  EXPECT_EQ(point["ddp_sent_bytes"], 4 * (2 * block + root));
  EXPECT_GT(point["step_ms"].get<double>(), sharded["input"]["step_ms"].get<double>());
  expect_refused("scale " + dir.file("cnn.json") + " --fabric nvlink4 --shard full",
                 "records no repeated blocks");
  expect_refused(
      "scale " + dir.file("llama.json") + " --fabric nvlink4 --shard grads --tensor-parallel 2",
      "predict one parallelism each");
}

TEST(ScaleCli, ReportAndCompareShowPredictedFiguresMarkedPredicted) {
  ScratchDirectory dir("scale-report");
  ASSERT_EQ(run_gpubench(kOneRank + dir.file("one.json")).exit_code, 0);
  const std::string predict = " --predict-gpus 8 --predict-fabric A100-80GB-SXM";
  const auto report = run_gpubench("report " + dir.file("one.json") + predict);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("Predicted 8-GPU"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("(predicted) |"), std::string::npos) << report.output;
  const auto compare =
      run_gpubench("compare " + dir.file("one.json") + " " + dir.file("one.json") + predict);
  ASSERT_EQ(compare.exit_code, 0) << compare.output;
  EXPECT_NE(compare.output.find("Predicted 8-GPU"), std::string::npos) << compare.output;
  const auto plain = run_gpubench("report " + dir.file("one.json"));
  EXPECT_EQ(plain.output.find("Predicted"), std::string::npos) << "only when asked";
}

// A model too large for the host: `train --blocks 2` times each parameter, and scale extends it
// to the model's depth with DDP's buckets; those are exactly the whole model's.
TEST(ScaleCli, ATimelineOfTwoBlocksIsExtendedToTheWholeModelsBuckets) {
  ScratchDirectory dir("scale-blocks");
  const std::string train =
      "train --model test-deep-llama --tuning lora --lora-rank 64 --lora-targets all-linear "
      "--device cpu --seq-len 8 --batch-size 1 --warmup-steps 1 --steps 2 --repeat 1 "
      "--bucket-mb 1 ";
  ASSERT_EQ(run_gpubench(train + "--blocks 2 --output " + dir.file("two.json")).exit_code, 0);
  ASSERT_EQ(run_gpubench(train + "--output " + dir.file("whole.json")).exit_code, 0);
  const auto two = read_json(dir.file("two.json"));
  EXPECT_EQ(two["benchmark"]["blocks"], 2);
  EXPECT_EQ(two["timeline"]["model_blocks"], 6);
  const auto& blocks = two["timeline"]["parameter_blocks"];
  ASSERT_EQ(blocks.size(), two["timeline"]["bucket_bytes"].size()) << "a bucket a parameter";
  EXPECT_EQ(blocks.front(), 1) << "backward reaches the last block's adapters first";
  EXPECT_EQ(blocks.back(), 0);

  const auto extended = scale_json(dir.file("two.json") + " --fabric L40S --gpus 8");
  EXPECT_NE(extended["input"]["extended"].get<std::string>().find("from 2 to 6 blocks"),
            std::string::npos);
  const auto whole = read_json(dir.file("whole.json"));
  EXPECT_FALSE(whole["timeline"].contains("parameter_blocks"));
  const auto from_whole = scale_json(dir.file("whole.json") + " --fabric L40S --gpus 8");
  EXPECT_EQ(from_whole["input"]["extended"], "");
  EXPECT_EQ(extended["input"]["gradient_buckets"], from_whole["input"]["gradient_buckets"]);
  EXPECT_EQ(extended["input"]["gradient_bytes"], from_whole["input"]["gradient_bytes"]);
  EXPECT_GT(extended["input"]["gradient_buckets"].get<int>(), 2);
  // Same buckets, so the same all-reduces: the predicted communication is the same.
  EXPECT_NEAR(extended["fabrics"][0]["points"][0]["allreduce_ms"].get<double>(),
              from_whole["fabrics"][0]["points"][0]["allreduce_ms"].get<double>(), 1e-9);
  EXPECT_EQ(run_gpubench("scale " + dir.file("two.json") + " --fabric L40S -f csv").exit_code, 0);
  expect_refused(train + "--blocks 7", "blocks 7 is more than test-deep-llama's 6");
  expect_refused("train --model test-tiny-cnn --device cpu --blocks 1",
                 "--blocks applies to the transformer models");
  expect_refused("fit --model llama-3.2-1b --device cpu --blocks 2",
                 "fit predicts the whole model");
  expect_refused("infer --model llama-3.2-1b --device cpu --blocks 2",
                 "--blocks applies to training");
}

// What scripts/check-scale-ranks.sh times (docs/scaling.md), without timing anything: a measured
// 2-rank run, the single-rank basis and the Gloo curve carry the fields the check reads, and a
// prediction from them, on the run's clock and without overlap, succeeds. The arithmetic of
// the prediction is checked against hand-worked figures in tests/base/scaling_prediction_test.cpp.
TEST(ScaleCli, ACpuRankRunAndItsPredictionCarryWhatTheAccuracyCheckReads) {
  ScratchDirectory dir("scale-ranks");
  ASSERT_EQ(
      run_gpubench("allreduce --device cpu --gpus 2 -b 4K -e 64K -n 2 -o " + dir.file("ar.json"))
          .exit_code,
      0);
  const std::string train =
      "train --model test-tiny-cnn --device cpu --batch-size 2 --threads 1 --warmup-steps 1 "
      "--steps 2 --repeat 1 ";
  ASSERT_EQ(run_gpubench(train + "--output " + dir.file("one.json")).exit_code, 0);
  const auto two = run_gpubench(train + "--gpus 2 --output " + dir.file("two.json"));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  const auto one = read_json(dir.file("one.json")), many = read_json(dir.file("two.json"));
  EXPECT_EQ(many["distributed"]["world_size"], 2);
  for (const auto* result : {&one, &many}) {
    EXPECT_GT((*result)["timeline"]["forward_ms"].get<double>(), 0);
    EXPECT_GT((*result)["metrics"]["step_time_ms"]["median"].get<double>(), 0);
    EXPECT_GT((*result)["metrics"]["throughput"].get<double>(), 0);
  }
  EXPECT_EQ(many["timeline"]["bucket_bytes"], one["timeline"]["bucket_bytes"])
      << "the ranks all-reduce the buckets the basis records";
  const auto p = scale_json(dir.file("one.json") + " --fabric " + dir.file("ar.json") +
                            " --gpus 2 --throughput 100 --no-overlap");
  const auto& point = p["fabrics"][0]["points"][0];
  EXPECT_EQ(point["gpus"], 2);
  EXPECT_EQ(point["algorithm"], "measured");
  EXPECT_GT(point["allreduce_ms"].get<double>(), 0);
  EXPECT_NEAR(point["step_ms"].get<double>(),
              p["input"]["step_ms"].get<double>() + point["exposed_communication_ms"].get<double>(),
              1e-6)
      << "without overlap every all-reduce adds to the step";
}

}  // namespace
}  // namespace gpubench
