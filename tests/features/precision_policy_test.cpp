#include "features/precision/precision_policy.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "cpu_benchmark.h"
#include "run/run_benchmark.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

TEST(PrecisionPolicy, Fp32TurnsTf32OffAndTf32TurnsItOn) {
  PrecisionPolicy(Precision::kTf32, torch::kCPU).apply_global_flags();
  EXPECT_TRUE(compat::tf32_matmul_enabled());
  EXPECT_TRUE(compat::tf32_cudnn_enabled());
  PrecisionPolicy(Precision::kFp32, torch::kCPU).apply_global_flags();
  EXPECT_FALSE(compat::tf32_matmul_enabled());
  EXPECT_FALSE(compat::tf32_cudnn_enabled());
  for (Precision mixed : {Precision::kFp16, Precision::kBf16}) {
    PrecisionPolicy(mixed, torch::kCPU).apply_global_flags();
    EXPECT_FALSE(compat::tf32_matmul_enabled());
  }
}

// --deterministic: the graph-vs-eager loss check compares two processes, which cuDNN's
// autotuning would let pick different algorithms.
TEST(PrecisionPolicy, DeterministicRunsTurnAutotuningOffAndAreRecorded) {
  PrecisionPolicy(Precision::kFp32, torch::Device(torch::kCUDA, 0)).apply_global_flags(true);
  EXPECT_FALSE(at::globalContext().benchmarkCuDNN());
  EXPECT_TRUE(at::globalContext().deterministicCuDNN());
  EXPECT_TRUE(at::globalContext().deterministicAlgorithms());
  ASSERT_NE(std::getenv("CUBLAS_WORKSPACE_CONFIG"), nullptr);
  EXPECT_STREQ(std::getenv("CUBLAS_WORKSPACE_CONFIG"), ":4096:8");
  PrecisionPolicy(Precision::kFp32, torch::Device(torch::kCUDA, 0)).apply_global_flags(false);
  EXPECT_TRUE(at::globalContext().benchmarkCuDNN());
  EXPECT_FALSE(at::globalContext().deterministicCuDNN());
  EXPECT_FALSE(at::globalContext().deterministicAlgorithms());

  ResolvedBenchmark b = testing::cpu_benchmark("test-tiny-cnn", 2);
  b.deterministic = true;
  const Result run = run_benchmark(b);
  ASSERT_EQ(run.status, RunStatus::kOk) << run.error;
  EXPECT_TRUE(run.system.cudnn_deterministic);
  EXPECT_FALSE(run.system.cudnn_benchmark);
  EXPECT_TRUE(result_to_json(run)["system"]["cudnn_deterministic"].get<bool>());
  b.deterministic = false;
  EXPECT_FALSE(run_benchmark(b).system.cudnn_deterministic);
}

TEST(PrecisionPolicy, AutocastDtypeAndLossScaling) {
  EXPECT_FALSE(PrecisionPolicy(Precision::kFp32, torch::kCPU).autocast_dtype());
  EXPECT_FALSE(PrecisionPolicy(Precision::kTf32, torch::kCPU).autocast_dtype());
  EXPECT_EQ(*PrecisionPolicy(Precision::kFp16, torch::kCPU).autocast_dtype(), torch::kHalf);
  EXPECT_EQ(*PrecisionPolicy(Precision::kBf16, torch::kCPU).autocast_dtype(), torch::kBFloat16);
  EXPECT_TRUE(PrecisionPolicy(Precision::kFp16, torch::kCPU).uses_loss_scaling());
  EXPECT_FALSE(PrecisionPolicy(Precision::kBf16, torch::kCPU).uses_loss_scaling());
}

TEST(MixedPrecisionScope, Bf16OnTheCpuComputesMatmulsInBfloat16AndRestoresState) {
  const torch::Tensor a = torch::randn({4, 4});
  const PrecisionPolicy policy(Precision::kBf16, torch::kCPU);
  {
    MixedPrecisionScope scope(policy);
    EXPECT_TRUE(compat::autocast_enabled(c10::DeviceType::CPU));
    EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kBFloat16);
  }
  EXPECT_FALSE(compat::autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat);
}

TEST(MixedPrecisionScope, Fp32LeavesAutocastOff) {
  const torch::Tensor a = torch::randn({4, 4});
  MixedPrecisionScope scope(PrecisionPolicy(Precision::kFp32, torch::kCPU));
  EXPECT_FALSE(compat::autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat);
}

}  // namespace
}  // namespace gpubench
