#include "optim/grad_scaler.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace gpubench {
namespace {

struct ScalerFixture {
  torch::Tensor weight = torch::ones({3}, torch::requires_grad());
  torch::optim::SGD optimizer{{weight}, torch::optim::SGDOptions(1.0)};

  void set_grad(std::vector<float> values) { weight.mutable_grad() = torch::tensor(values); }
};

TEST(GradScaler, ScalesTheLossByTheInitialScale) {
  GradScaler scaler(torch::kCPU);
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 65536.0);
  EXPECT_FLOAT_EQ(scaler.scale(torch::tensor(2.0f)).item<float>(), 131072.0f);
}

TEST(GradScaler, UnscalesGradientsBeforeTheStep) {
  ScalerFixture f;
  GradScaler scaler(torch::kCPU, {/*init_scale=*/4.0, 2.0, 0.5, 2000});
  f.set_grad({4.0f, 8.0f, -4.0f});
  EXPECT_TRUE(scaler.step(f.optimizer));
  // lr 1: weight = 1 - grad / scale
  EXPECT_TRUE(torch::allclose(f.weight.detach(), torch::tensor({0.0f, -1.0f, 2.0f})));
}

TEST(GradScaler, SkipsTheStepAndBacksOffOnInfOrNan) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
    ScalerFixture f;
    GradScaler scaler(torch::kCPU);
    f.set_grad({1.0f, bad, 1.0f});
    EXPECT_FALSE(scaler.step(f.optimizer));
    scaler.update();
    EXPECT_TRUE(torch::equal(f.weight.detach(), torch::ones({3})));  // untouched
    EXPECT_DOUBLE_EQ(scaler.current_scale(), 32768.0);
    EXPECT_EQ(scaler.skipped_steps(), 1);
  }
}

TEST(GradScaler, GrowsAfterTheIntervalOfCleanSteps) {
  ScalerFixture f;
  GradScaler scaler(torch::kCPU, {/*init_scale=*/8.0, /*growth=*/2.0, /*backoff=*/0.5,
                                  /*interval=*/3});
  for (int i = 0; i < 2; ++i) {
    f.set_grad({1.0f, 1.0f, 1.0f});
    ASSERT_TRUE(scaler.step(f.optimizer));
    scaler.update();
    EXPECT_DOUBLE_EQ(scaler.current_scale(), 8.0);
  }
  f.set_grad({1.0f, 1.0f, 1.0f});
  scaler.step(f.optimizer);
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 16.0);
  // An overflow resets the count of clean steps as well as halving the scale.
  f.set_grad({1.0f, std::numeric_limits<float>::infinity(), 1.0f});
  scaler.step(f.optimizer);
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 8.0);
  for (int i = 0; i < 2; ++i) {
    f.set_grad({1.0f, 1.0f, 1.0f});
    scaler.step(f.optimizer);
    scaler.update();
  }
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 8.0);
}

}  // namespace
}  // namespace gpubench
