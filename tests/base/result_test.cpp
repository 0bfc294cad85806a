#include "results/result.h"

#include <filesystem>
#include <fstream>

#include <functional>

#include <gtest/gtest.h>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "results/result_path.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

Result sample_result() {
  Result r;
  r.status = RunStatus::kOk;
  r.benchmark.model = "resnet50";
  r.benchmark.precision = Precision::kBf16;
  r.benchmark.device = DeviceKind::kCpu;
  r.benchmark.gpus = 1;
  r.benchmark.tensor_parallel = 1;
  r.benchmark.expert_parallel = 1;
  r.benchmark.bucket_mb = 25;
  r.benchmark.timeout_s = 300;
  r.benchmark.batch_size = 8;
  r.benchmark.warmup_steps = 2;
  r.benchmark.steps = 5;
  r.benchmark.repeat = 3;
  r.benchmark.seed = 9;
  r.benchmark.channels_last = true;
  r.benchmark.threads = 2;
  r.model_family = "convnet";
  r.model_reference = "torchvision";
  r.optimizer_impl = "fused";
  r.input_shape = {3, 224, 224};
  r.params = 25557032;
  r.metrics.throughput = 12.5;
  r.metrics.throughput_unit = "images/sec";
  r.metrics.per_device_throughput = 12.5;
  r.metrics.trials = {12.0, 12.5, 13.0};
  r.metrics.step_time_ms = summarize({600, 640, 700});
  r.metrics.forward_flops_per_sample = 8178368512;
  r.metrics.skipped_steps = 1;
  r.system.hostname = "node1";
  r.system.gpu_names = {"NVIDIA A40", "NVIDIA A40"};
  r.system.tf32_cudnn = true;
  r.started_at = "2026-11-29T00:00:00Z";
  r.duration_s = 42.0;
  r.timeline.clock = "host clock";
  r.timeline.measured_over = "timed steps";
  r.timeline.steps = 15;
  r.timeline.forward_ms = 200;
  r.timeline.backward_ms = 400;
  r.timeline.optimizer_ms = 30;
  r.timeline.bucket_cap_bytes = 25 << 20;
  r.timeline.first_bucket_cap_bytes = 1 << 20;
  r.timeline.bucket_bytes = {8196000, 26255360};
  r.timeline.bucket_ready_ms = {12.5, 399.0};
  r.timeline.overhead_ms = 0.01;
  return r;
}

TEST(Result, JsonRoundTripKeepsEveryField) {
  const Result original = sample_result();
  const nlohmann::json document = result_to_json(original);
  EXPECT_EQ(document["schema"], "gpubench.result/1");
  EXPECT_EQ(document["benchmark"]["global_batch_size"], 8);
  EXPECT_FALSE(document.contains("error"));
  const Result copy = result_from_json(document);
  EXPECT_TRUE(copy.benchmark == original.benchmark);
  EXPECT_EQ(copy.metrics.trials, original.metrics.trials);
  EXPECT_DOUBLE_EQ(copy.metrics.step_time_ms.p95, original.metrics.step_time_ms.p95);
  EXPECT_EQ(copy.metrics.skipped_steps, 1);
  EXPECT_EQ(copy.optimizer_impl, "fused");
  EXPECT_EQ(copy.system.gpu_names, original.system.gpu_names);
  EXPECT_TRUE(copy.system.tf32_cudnn);
  EXPECT_EQ(copy.timeline.bucket_bytes, original.timeline.bucket_bytes);
  EXPECT_EQ(copy.timeline.bucket_ready_ms, original.timeline.bucket_ready_ms);
  EXPECT_NEAR(document["timeline"]["overhead_share"].get<double>(), 0.01 / 640, 1e-12);
  EXPECT_EQ(result_to_json(copy), document);
}

TEST(Result, ATimelineWhoseBucketListsDifferInLengthIsRefused) {
  nlohmann::json forged = result_to_json(sample_result());
  forged["timeline"]["bucket_ready_ms"].push_back(500.0);
  EXPECT_THROW(result_from_json(forged), UsageError);
}

// Counts a result file gives are bounded by what the tool builds: a timeline of a billion blocks
// (which `scale` would extend to 9 billion entries) and gradient bytes that overflow a signed
// sum (two buckets of 6e18 printed as a negative size) are refused, naming the key.
TEST(Result, CountsBeyondWhatTheToolBuildsAreRefused) {
  const auto refused = [](const std::function<void(nlohmann::json&)>& forge,
                          const std::string& key) {
    nlohmann::json forged = result_to_json(sample_result());
    forge(forged);
    try {
      result_from_json(forged);
      ADD_FAILURE() << key << " was read";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(key), std::string::npos) << error.what();
    }
  };
  for (const double blocks : {1e9, 1e15, 9.2e18}) {
    refused([&](nlohmann::json& r) { r["timeline"]["model_blocks"] = blocks; }, "model_blocks");
  }
  refused([](nlohmann::json& r) { r["timeline"]["model_blocks"] = kMaxModelBlocks + 1; },
          "model_blocks");
  refused(
      [](nlohmann::json& r) {
        r["timeline"]["parameter_blocks"] = {0, kMaxModelBlocks};
      },
      "parameter_blocks");
  refused(
      [](nlohmann::json& r) {
        r["timeline"]["bucket_bytes"] = {6000000000000000000, 6000000000000000000};
        r["timeline"]["bucket_ready_ms"] = {1.0, 2.0};
      },
      "bucket_bytes");
  refused(
      [](nlohmann::json& r) {
        r["timeline"]["bucket_bytes"] = {kMaxGradientBytes, kMaxGradientBytes};
        r["timeline"]["bucket_ready_ms"] = {1.0, 2.0};
      },
      "bucket_bytes add up");
  refused([](nlohmann::json& r) { r["distributed"]["gradient_bytes"] = 6e18; }, "gradient_bytes");
}

TEST(Result, FailedResultCarriesTheError) {
  Result r = sample_result();
  r.status = RunStatus::kOom;
  r.error = "CUDA out of memory";
  const nlohmann::json document = result_to_json(r);
  EXPECT_EQ(document["status"], "oom");
  EXPECT_EQ(document["error"], "CUDA out of memory");
  EXPECT_EQ(result_from_json(document).status, RunStatus::kOom);
}

TEST(Result, OtherSchemasAreRefusedClearly) {
  nlohmann::json document = result_to_json(sample_result());
  document["schema"] = "gpubench.result/2";
  try {
    result_from_json(document);
    FAIL() << "schema 2 accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("gpubench.result/2"), std::string::npos);
  }
  document["schema"] = "something.else/1";
  EXPECT_THROW(result_from_json(document), UsageError);
}

TEST(Result, AtomicWriteLeavesOnlyTheFinalFile) {
  testing::ScratchDirectory dir("atomic");
  const std::string path = dir.file("result.json");
  write_json_atomically(path, result_to_json(sample_result()));
  write_json_atomically(path, result_to_json(sample_result()));  // replaces in place
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "result.json");
  }
  EXPECT_EQ(files, 1);
  EXPECT_DOUBLE_EQ(read_result_file(path).metrics.throughput, 12.5);
}

// A result's figures hold together: an ok run has trials and its throughput is their median.
TEST(Result, FiguresThatDoNotHoldTogetherAreRefused) {
  nlohmann::json forged = result_to_json(sample_result());
  forged["metrics"]["throughput"] = 3850;
  forged["metrics"]["trials"] = {1, 1, 1};
  EXPECT_THROW(result_from_json(forged), UsageError);
  nlohmann::json untried = result_to_json(sample_result());
  untried["metrics"]["trials"] = nlohmann::json::array();
  EXPECT_THROW(result_from_json(untried), UsageError);
  nlohmann::json huge = result_to_json(sample_result());
  huge["metrics"]["throughput"] = 1.7e308;
  huge["metrics"]["trials"] = {1.7e308};
  try {
    result_from_json(huge);
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("metrics.throughput"), std::string::npos)
        << error.what();
  }
  const nlohmann::json written = result_to_json(sample_result());
  EXPECT_EQ(result_to_json(result_from_json(written)), written)
      << "what it accepts reads back whole";
}

TEST(Result, UnwritablePathsAreUsageErrors) {
  testing::ScratchDirectory dir("unwritable");
  const std::string file = dir.file("plain-file");
  std::ofstream(file) << "x";
  EXPECT_THROW(write_json_atomically(file + "/result.json", nlohmann::json::object()), UsageError);
  EXPECT_THROW(prepare_result_path(file + "/results", sample_result().benchmark), UsageError);
}

TEST(Result, ReadingMalformedFilesIsAUsageError) {
  testing::ScratchDirectory dir("malformed");
  std::ofstream(dir.file("bad.json")) << "{not json";
  EXPECT_THROW(read_result_file(dir.file("bad.json")), UsageError);
  EXPECT_THROW(read_result_file(dir.file("missing.json")), UsageError);
}

TEST(ResultOutput, DirectoryOutputGetsADescriptiveUniqueName) {
  testing::ScratchDirectory dir("names");
  const ResolvedBenchmark spec = sample_result().benchmark;
  const std::string first = prepare_result_path(dir.path() + "/nested", spec);
  EXPECT_NE(first.find("resnet50_bf16_cpu"), std::string::npos);
  std::ofstream(first) << "{}";
  EXPECT_NE(prepare_result_path(dir.path() + "/nested", spec), first);
}

}  // namespace
}  // namespace gpubench
