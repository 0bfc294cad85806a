#include "train/precision_policy.h"

#include <gtest/gtest.h>

#include "train/compat.h"

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

TEST(PrecisionPolicy, AutocastDtypeAndLossScaling) {
  EXPECT_FALSE(PrecisionPolicy(Precision::kFp32, torch::kCPU).autocast_dtype());
  EXPECT_FALSE(PrecisionPolicy(Precision::kTf32, torch::kCPU).autocast_dtype());
  EXPECT_EQ(*PrecisionPolicy(Precision::kFp16, torch::kCPU).autocast_dtype(), torch::kHalf);
  EXPECT_EQ(*PrecisionPolicy(Precision::kBf16, torch::kCPU).autocast_dtype(), torch::kBFloat16);
  EXPECT_TRUE(PrecisionPolicy(Precision::kFp16, torch::kCPU).uses_loss_scaling());
  EXPECT_FALSE(PrecisionPolicy(Precision::kBf16, torch::kCPU).uses_loss_scaling());
}

TEST(AutocastScope, Bf16OnTheCpuComputesMatmulsInBfloat16AndRestoresState) {
  const torch::Tensor a = torch::randn({4, 4});
  const PrecisionPolicy policy(Precision::kBf16, torch::kCPU);
  {
    AutocastScope scope(policy);
    EXPECT_TRUE(compat::autocast_enabled(c10::DeviceType::CPU));
    EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kBFloat16);
  }
  EXPECT_FALSE(compat::autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat);
}

TEST(AutocastScope, Fp32LeavesAutocastOff) {
  const torch::Tensor a = torch::randn({4, 4});
  AutocastScope scope(PrecisionPolicy(Precision::kFp32, torch::kCPU));
  EXPECT_FALSE(compat::autocast_enabled(c10::DeviceType::CPU));
  EXPECT_EQ(torch::mm(a, a).scalar_type(), torch::kFloat);
}

}  // namespace
}  // namespace gpubench
