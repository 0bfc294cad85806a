// MultiTensorAdamW against torch::optim::AdamW: the same update rule, moments and step counts,
// from the same weights and gradients, for parameters of several shapes; the fused kernel too
// where this LibTorch has it on the CPU (2.4 and newer).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "float_bounds.h"
#include "optim/multi_tensor_adamw.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

// Parameters of a transformer's shapes: projections, a norm, an embedding, a bias.
std::vector<torch::Tensor> make_adamw_parameters() {
  torch::manual_seed(5);
  std::vector<torch::Tensor> parameters;
  for (const auto& shape :
       std::vector<std::vector<int64_t>>{{16, 8}, {8}, {8}, {50, 8}, {4, 16}, {1}}) {
    parameters.push_back(torch::randn(shape).requires_grad_(true));
  }
  return parameters;
}

std::vector<torch::Tensor> copy_of_adamw_parameters(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> copies;
  for (const auto& p : parameters) copies.push_back(p.detach().clone().requires_grad_(true));
  return copies;
}

struct AdamWCase {
  const char* name;
  OptimizerImplementation implementation;
  torch::optim::AdamWOptions options;
};

class MultiTensorAdamWMatchesTorchAdamW : public ::testing::TestWithParam<AdamWCase> {};

// Ten steps with the same gradients on both sides; the last parameter gets no gradient in the
// first three steps (its moments and step count start later) and none in step 7 (it must stay).
TEST_P(MultiTensorAdamWMatchesTorchAdamW, TenStepsGiveTheSameParameters) {
  if (GetParam().implementation == OptimizerImplementation::kFused &&
      !compat::fused_adamw_available(torch::kCPU)) {
    GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no fused AdamW on the CPU";
  }
  const auto reference_parameters = make_adamw_parameters();
  const auto ours_parameters = copy_of_adamw_parameters(reference_parameters);
  torch::optim::AdamW reference(reference_parameters, GetParam().options);
  MultiTensorAdamW ours(ours_parameters, GetParam().options, GetParam().implementation);
  torch::manual_seed(9);
  for (int step = 0; step < 10; ++step) {
    for (size_t i = 0; i < reference_parameters.size(); ++i) {
      const bool gets_gradient = i + 1 < reference_parameters.size() || (step >= 3 && step != 7);
      const torch::Tensor grad =
          gets_gradient ? torch::randn_like(reference_parameters[i]) : torch::Tensor();
      reference_parameters[i].mutable_grad() = grad.defined() ? grad.clone() : grad;
      ours_parameters[i].mutable_grad() = grad.defined() ? grad.clone() : grad;
    }
    reference.step();
    ours.step();
  }
  // Adam's step is at most lr (1 - b1) / sqrt(1 - b2) (3.2 lr for the defaults): 10 lr bounds it.
  const double largest_update = 10 * GetParam().options.lr();
  for (size_t i = 0; i < reference_parameters.size(); ++i) {
    const torch::Tensor bound =
        testing::same_rule_steps_bound(reference_parameters[i], 10, largest_update);
    EXPECT_LE(testing::worst_share_of_bound(ours_parameters[i], reference_parameters[i], bound),
              1.0)
        << GetParam().name << ", parameter " << i;
    EXPECT_FALSE(torch::equal(ours_parameters[i], make_adamw_parameters()[i]))
        << "parameter " << i << " never moved";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Options, MultiTensorAdamWMatchesTorchAdamW,
    ::testing::Values(
        AdamWCase{"foreach_weight_decay", OptimizerImplementation::kForeach,
                  torch::optim::AdamWOptions(1e-2).weight_decay(0.01)},
        AdamWCase{"foreach_betas_eps", OptimizerImplementation::kForeach,
                  torch::optim::AdamWOptions(3e-3).betas({0.8, 0.95}).eps(1e-6).weight_decay(0.1)},
        AdamWCase{"foreach_no_decay", OptimizerImplementation::kForeach,
                  torch::optim::AdamWOptions(1e-2).weight_decay(0)},
        AdamWCase{"fused_weight_decay", OptimizerImplementation::kFused,
                  torch::optim::AdamWOptions(1e-2).weight_decay(0.01)},
        AdamWCase{"fused_betas_eps", OptimizerImplementation::kFused,
                  torch::optim::AdamWOptions(3e-3).betas({0.8, 0.95}).eps(1e-6).weight_decay(0.1)}),
    [](const auto& info) { return std::string(info.param.name); });

// The fused step skipped on the device: nothing moves, and the step count stays where it was
// (the next step's bias correction is the first step's, as torch::optim::AdamW's would be).
TEST(MultiTensorAdamW, AFusedStepWithFoundInfChangesNothing) {
  if (!compat::fused_adamw_available(torch::kCPU)) {
    GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no fused AdamW on the CPU";
  }
  const auto parameters = make_adamw_parameters();
  const auto reference_parameters = copy_of_adamw_parameters(parameters);
  const auto options = torch::optim::AdamWOptions(1e-2).weight_decay(0.01);
  MultiTensorAdamW ours(parameters, options, OptimizerImplementation::kFused);
  torch::optim::AdamW reference(reference_parameters, options);
  for (size_t i = 0; i < parameters.size(); ++i) {
    const torch::Tensor grad = torch::randn_like(parameters[i]);
    parameters[i].mutable_grad() = grad.clone();
    reference_parameters[i].mutable_grad() = grad.clone();
  }
  ours.step_unless(torch::ones({1}));
  for (size_t i = 0; i < parameters.size(); ++i) {
    EXPECT_TRUE(torch::equal(parameters[i], reference_parameters[i])) << "parameter " << i;
  }
  ours.step_unless(torch::zeros({1}));
  reference.step();
  for (size_t i = 0; i < parameters.size(); ++i) {
    EXPECT_TRUE(torch::allclose(parameters[i], reference_parameters[i], 1e-6, 1e-7))
        << "parameter " << i;
  }
}

TEST(MultiTensorAdamW, ItsNameAndWhatItRefuses) {
  auto parameters = make_adamw_parameters();
  MultiTensorAdamW foreach_adamw(parameters, torch::optim::AdamWOptions(1e-3),
                                 OptimizerImplementation::kForeach);
  EXPECT_EQ(foreach_adamw.description(), "AdamW betas (0.9, 0.999), eps 1e-08, weight decay 0.01");
  EXPECT_THROW(foreach_adamw.step_unless(torch::zeros({1})), std::invalid_argument);
  EXPECT_THROW(MultiTensorAdamW(parameters, torch::optim::AdamWOptions(1e-3).amsgrad(true),
                                OptimizerImplementation::kForeach),
               std::invalid_argument);
  EXPECT_EQ(best_adamw_implementation(torch::kCPU), compat::fused_adamw_available(torch::kCPU)
                                                        ? OptimizerImplementation::kFused
                                                        : OptimizerImplementation::kForeach);
}

}  // namespace
}  // namespace gpubench
