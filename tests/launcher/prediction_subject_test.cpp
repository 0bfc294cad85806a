// fit's stand-ins (launcher/prediction_subject.h): what this build or machine cannot run is probed
// as a setting it can and counted, each stand-in said; what it can run is probed as asked.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/errors.h"
#include "launcher/prediction_subject.h"
#include "system/machine.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

BenchmarkRequest cpu_request(Precision precision, Task task = Task::kTrain) {
  BenchmarkRequest request;
  request.model = "test-tiny-llama";
  request.device = DeviceKind::kCpu;
  request.precision = precision;
  request.task = task;
  request.batch_size = 2;
  if (task == Task::kInfer) {
    request.prompt_len = 16;
    request.gen_len = 8;
  }
  return request;
}

TEST(PredictionSubject, Fp16AndTf32AreProbedAsTheirElementSizesOnTheCpu) {
  for (const auto& [asked, probed] : {std::pair{Precision::kFp16, Precision::kBf16},
                                      std::pair{Precision::kTf32, Precision::kFp32}}) {
    const PredictionSubject subject = resolve_for_prediction(cpu_request(asked));
    EXPECT_EQ(subject.probed.precision, probed);
    EXPECT_EQ(subject.asked.precision, asked);
    ASSERT_EQ(subject.stand_ins.size(), 1u);
    EXPECT_EQ(subject.stand_ins.front().rfind(
                  "precision " + to_string(asked) + " probed as " + to_string(probed), 0),
              0u)
        << subject.stand_ins.front();
    EXPECT_FALSE(subject.counted_weights);
  }
  const PredictionSubject bf16 = resolve_for_prediction(cpu_request(Precision::kBf16));
  EXPECT_TRUE(bf16.stand_ins.empty());
  EXPECT_EQ(bf16.probed.precision, Precision::kBf16);
}

// The probes stand for one rank in one process: every core here, not a CPU rank's share of them;
// threads as given where given.
TEST(PredictionSubject, TheProbesTakeEveryCoreWhateverTheRanks) {
  BenchmarkRequest request = cpu_request(Precision::kFp32);
  request.gpus = 8;
  const int cores = std::max(1, read_machine_facts().cpu_cores);
  EXPECT_EQ(resolve_for_prediction(request).probed.threads, cores);
  request.threads = 1;
  EXPECT_EQ(resolve_for_prediction(request).probed.threads, 1);
}

TEST(PredictionSubject, IntegerWeightsAreCountedWhereTheKernelsAreMissing) {
  for (const std::string weights : {"int8", "int4"}) {
    BenchmarkRequest request = cpu_request(Precision::kBf16, Task::kInfer);
    request.weights = weights;
    if (weights == "int4") request.weight_group = 32;
    const PredictionSubject subject = resolve_for_prediction(request);
    EXPECT_EQ(subject.asked.weights, weights);
    if (compat::kHasIntWeights) {  // probed as asked
      EXPECT_TRUE(subject.stand_ins.empty());
      EXPECT_FALSE(subject.counted_weights);
      EXPECT_EQ(subject.probed.weights, weights);
      continue;
    }
    ASSERT_TRUE(subject.counted_weights) << weights;
    EXPECT_EQ(subject.counted_weights->name(), weights);
    if (weights == "int4") {  // 32 inputs a group: a bf16 scale and zero per 32 codes
      EXPECT_EQ(subject.counted_weights->bytes_in(64, 128), 64 * 128 / 2 + 4 * 64 * 2 * 2);
    }
    EXPECT_NE(subject.probed.weights, weights);
    ASSERT_EQ(subject.stand_ins.size(), 1u);
  }
}

TEST(PredictionSubject, Fp8InferenceIsCountedAndFp8TrainingRefusedWithoutItsKernels) {
  const bool runs = compat::kHasFp8 && compat::scaled_mm_runs_on_cpu();
  const PredictionSubject infer =
      resolve_for_prediction(cpu_request(Precision::kFp8, Task::kInfer));
  EXPECT_EQ(infer.asked.precision, Precision::kFp8);
  EXPECT_EQ(static_cast<bool>(infer.counted_weights), !runs);
  if (!runs) {
    EXPECT_EQ(infer.probed.precision, Precision::kBf16);
    EXPECT_EQ(infer.asked.weights, "fp8");
    EXPECT_EQ(infer.counted_weights->name(), "fp8");
    try {
      resolve_for_prediction(cpu_request(Precision::kFp8));
      FAIL() << "FP8 training without its kernels is measured, not stood in for";
    } catch (const Unavailable& refused) {
      EXPECT_NE(std::string(refused.what()).find("fit measures FP8 training's"), std::string::npos)
          << refused.what();
    }
  }
}

}  // namespace
}  // namespace gpubench
