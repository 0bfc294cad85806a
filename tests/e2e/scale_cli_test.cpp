// gpubench scale (docs/scaling.md): predictions from a real single-device result in every
// format, on named, datasheet and measured fabrics; bad input refused in one line; and the check
// against CPU ranks: 2 (and 4) Gloo ranks predicted from single-rank results and the measured
// Gloo all-reduce curve, then run, within 15 % of the measured step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <iostream>
#include <thread>
#include <utility>
#include <vector>

#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::CommandResult;
using testing::expect_usage_error;
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
  expect_usage_error("scale " + one, "name the fabric with --fabric");
  expect_usage_error("scale " + one + " --fabric intra=warp9", "intra=warp9 is neither");
  expect_usage_error("scale " + one + " --fabric intra=nvlink4,inter=ib400x0", "NICs a node");
  expect_usage_error("scale " + one + " --fabric nvlink4 --gpus 0", "--gpus");
  expect_usage_error("scale " + one + " --fabric nvlink4 -f pdf", "pdf");
  ASSERT_EQ(run_gpubench(kOneRank + dir.file("off.json") + " --no-timeline").exit_code, 0);
  expect_usage_error("scale " + dir.file("off.json") + " --fabric nvlink4", "no backward timeline");
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
      "train --model llama-3.2-1b --tuning lora --device cpu --seq-len 8 --batch-size 1 "
      "--warmup-steps 1 --steps 2 --repeat 1 --bucket-mb 1 ";
  ASSERT_EQ(run_gpubench(train + "--blocks 2 --output " + dir.file("two.json")).exit_code, 0);
  ASSERT_EQ(run_gpubench(train + "--output " + dir.file("whole.json")).exit_code, 0);
  const auto two = read_json(dir.file("two.json"));
  EXPECT_EQ(two["benchmark"]["blocks"], 2);
  EXPECT_EQ(two["timeline"]["model_blocks"], 16);
  const auto& blocks = two["timeline"]["parameter_blocks"];
  ASSERT_EQ(blocks.size(), two["timeline"]["bucket_bytes"].size()) << "a bucket a parameter";
  EXPECT_EQ(blocks.front(), 1) << "backward reaches the last block's adapters first";
  EXPECT_EQ(blocks.back(), 0);

  const auto extended = scale_json(dir.file("two.json") + " --fabric L40S --gpus 8");
  EXPECT_NE(extended["input"]["extended"].get<std::string>().find("from 2 to 16 blocks"),
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
  expect_usage_error(train + "--blocks 17", "blocks 17 is more than llama-3.2-1b's 16");
  expect_usage_error("train --model test-tiny-cnn --device cpu --blocks 1",
                     "blocks applies to the transformer models");
  expect_usage_error("fit --model llama-3.2-1b --device cpu --blocks 2",
                     "fit predicts the whole model");
  expect_usage_error("infer --model llama-3.2-1b --device cpu --blocks 2",
                     "blocks applies to training");
}

double measured_step_ms(const std::string& path) {
  return read_json(path)["metrics"]["step_time_ms"]["median"].get<double>();
}

// The slowest of `ranks` single-rank runs made at once, and its step.
std::pair<std::string, double> slowest_of_concurrent_runs(const std::string& train, int ranks,
                                                          const ScratchDirectory& dir,
                                                          const std::string& stem) {
  std::vector<std::future<CommandResult>> runs;
  for (int r = 0; r < ranks; ++r) {
    runs.push_back(std::async(std::launch::async, [&, r] {
      return run_gpubench(train + "--output " + dir.file(stem + std::to_string(r) + ".json"));
    }));
  }
  std::pair<std::string, double> slowest{"", 0};
  for (int r = 0; r < ranks; ++r) {
    const CommandResult run = runs[static_cast<size_t>(r)].get();
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const std::string file = dir.file(stem + std::to_string(r) + ".json");
    if (run.exit_code == 0 && measured_step_ms(file) > slowest.second) {
      slowest = {file, measured_step_ms(file)};
    }
  }
  return slowest;
}

double forward_ms(const std::string& path) {
  return read_json(path)["timeline"]["forward_ms"].get<double>();
}

// CPU ranks of one thread each, one core a rank. The prediction's single device is a core with
// its neighbours busy, as they are in a data-parallel step: `ranks` single-rank runs at once, and
// of them the slowest, since every rank of a data-parallel step waits for the slowest (cores share
// caches and memory bandwidth: on the 2-core machine of docs/scaling.md a lone rank stepped in
// 622 ms and two at once in 921 and 1,016). With fewer than two cores a rank, Gloo's reduction and
// socket copies run on the cores that compute, so the prediction adds the all-reduces to the
// step (--no-overlap).
// That machine's speed also drifts, by up to 30 % between two runs a few seconds apart (the same
// communication-free forward pass took 278 ms and 427 ms). What is checked is what the model
// predicts, the communication: the single-rank basis is put on the data-parallel run's clock by
// the ratio of their forward passes, which carry no communication in either (scale --throughput),
// and the median of three rounds, each a basis and a run, must be within 15 %.
void check_cpu_ranks(int ranks) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores < static_cast<unsigned>(ranks)) {
    GTEST_SKIP() << ranks << " ranks need " << ranks << " cores, one a rank; this machine has "
                 << cores << " (docs/scaling.md: what oversubscribed ranks do)";
  }
  const bool overlap = cores >= static_cast<unsigned>(2 * ranks);
  ScratchDirectory dir("scale-ranks-" + std::to_string(ranks));
  const std::string train =
      "train --model resnet50 --device cpu --batch-size 2 --threads 1 --warmup-steps 2 "
      "--steps 6 --repeat 1 ";
  const auto curve = run_gpubench("allreduce --device cpu --gpus " + std::to_string(ranks) +
                                  " -b 4K -e 64M -n 5 -o " + dir.file("ar.json"));
  ASSERT_EQ(curve.exit_code, 0) << curve.output;
  std::vector<double> ratios;
  for (int round = 0; round < 3; ++round) {
    const std::string stem = "round" + std::to_string(round) + "-one-";
    const auto [basis, basis_ms] = slowest_of_concurrent_runs(train, ranks, dir, stem);
    ASSERT_FALSE(basis.empty());
    const std::string many = dir.file("round" + std::to_string(round) + "-many.json");
    const auto run = run_gpubench(train + "--gpus " + std::to_string(ranks) + " --output " + many);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const double clock = forward_ms(many) / forward_ms(basis);
    const double basis_throughput = read_json(basis)["metrics"]["throughput"].get<double>();
    const auto p =
        scale_json(basis + " --fabric " + dir.file("ar.json") + " --gpus " + std::to_string(ranks) +
                   " --throughput " + std::to_string(basis_throughput / clock) +
                   (overlap ? "" : " --no-overlap"));
    const double predicted = p["fabrics"][0]["points"][0]["step_ms"].get<double>();
    const double measured = measured_step_ms(many);
    ratios.push_back(predicted / measured);
    std::cout << "[ scale    ] " << ranks << " Gloo ranks, round " << round + 1 << ": single ranks "
              << basis_ms << " ms, forward passes' ratio " << clock << ", predicted " << predicted
              << " ms, measured " << measured << " ms, ratio " << ratios.back()
              << (overlap ? "" : " (no overlap)") << "\n";
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_LT(std::abs(ratios[1] - 1), 0.15) << "median predicted/measured " << ratios[1];
}

TEST(ScaleCpuRanks, TwoGlooRanksWithinFifteenPercent) {
  check_cpu_ranks(2);
}

TEST(ScaleCpuRanks, FourGlooRanksWithinFifteenPercent) {
  check_cpu_ranks(4);
}

}  // namespace
}  // namespace gpubench
