// The detection models through the binary, on SSD300's tiny stand-in (test-tiny-ssd: the same
// default boxes, matching and loss on a network of 16 and 8 channels): a result that says how
// many objects each image holds; fit, predicted against the run, and the batch search, both from
// the model's smallest batch (2); and the bad inputs (exit 2, one line). Mask R-CNN's tiny stand-in
// trains through the binary in the GPU check's rehearsal (tests/gpu_check_rehearsal.sh).
#include <gtest/gtest.h>

#include "forked_cli.h"
#include "test_helpers.h"

namespace gpubench {
namespace detection_cli_tests {
namespace {

using testing::expect_refused;
using testing::read_json;
using testing::run_gpubench;
using testing::ScratchDirectory;

const char* kTinySsd = " --model test-tiny-ssd --device cpu --threads 1";

TEST(DetectionCli, TrainsAndSaysHowManyObjectsEachImageHolds) {
  ScratchDirectory dir("detection-train");
  const auto run = run_gpubench("train" + std::string(kTinySsd) +
                                " --batch-size 4 --objects-per-image 3 --warmup-steps 1 --steps 2 "
                                "--repeat 1 --output " +
                                dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["benchmark"]["objects_per_image"], 3);
  EXPECT_EQ(r["benchmark"]["model_family"], "convnet");
  EXPECT_EQ(r["metrics"]["throughput_unit"], "images/sec");
  EXPECT_EQ(r["benchmark"]["input_shape"], nlohmann::json({3, 300, 300}));
  EXPECT_GT(r["metrics"]["forward_flops_per_sample"].get<int64_t>(), 0);
}

// The probes run at batch 2 and 4, never 1; the run at batch 8 (7 objects, the default) is within
// 10 % of the prediction.
TEST(DetectionCli, FitPredictsTheRunFromItsSmallestBatch) {
  const std::string recipe = std::string(kTinySsd) + " --batch-size 8";
  const auto predicted = run_gpubench("fit" + recipe + " --format json");
  ASSERT_EQ(predicted.exit_code, 0) << predicted.output;
  ScratchDirectory dir("detection-fit");
  const auto measured = run_gpubench(
      "train" + recipe + " --warmup-steps 1 --steps 1 --repeat 1 --output " + dir.file("r.json"));
  ASSERT_EQ(measured.exit_code, 0) << measured.output;
  const auto result = read_json(dir.file("r.json"));
  EXPECT_EQ(result["benchmark"]["objects_per_image"], 7);
  const auto peak = result["metrics"]["memory"]["peak_bytes"].get<double>();
  const auto prediction =
      nlohmann::json::parse(predicted.output)["predicted_peak_bytes"].get<double>();
  EXPECT_NEAR(prediction / peak, 1.0, 0.1) << prediction << " predicted, " << peak << " measured";
}

TEST(DetectionCli, TheBatchSearchNeverProbesBelowTheSmallestBatch) {
  ScratchDirectory dir("detection-max");
  const auto run =
      run_gpubench("train" + std::string(kTinySsd) +
                   " --batch-size max --memory-limit 30M --warmup-steps 1 --steps 1 --repeat 1 "
                   "--output " +
                   dir.file("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto r = read_json(dir.file("r.json"));
  ASSERT_EQ(r["status"], "ok");
  const auto& search = r["batch_search"];
  EXPECT_GE(search["found_batch"].get<int64_t>(), 2);
  for (const auto& probe : search["probes"]) EXPECT_GE(probe["batch"].get<int64_t>(), 2) << probe;
}

TEST(DetectionCli, BadInputGetsOneLine) {
  expect_refused(
      "train --model resnet50 --objects-per-image 3",
      "--objects-per-image applies to the detection models (maskrcnn, ssd300), not to 'resnet50'");
  expect_refused("train --model ssd300 --batch-size 1",
                 "--batch-size 1 is too small for ssd300, which trains at 2 or more per device: "
                 "batch norm in training needs two values a channel, and its last feature map is "
                 "1x1");
  expect_refused("train --model ssd300 --objects-per-image 0",
                 "--objects-per-image must be an integer from 1 to 100, got 0");
  expect_refused("train --model ssd300 --objects-per-image 101",
                 "--objects-per-image must be an integer from 1 to 100, got 101");
}

}  // namespace
}  // namespace detection_cli_tests
}  // namespace gpubench
