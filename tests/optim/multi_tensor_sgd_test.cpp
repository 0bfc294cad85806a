// MultiTensorSgd against torch::optim::SGD: the same update rule and momentum state, from the
// same weights and gradients, for parameters of several shapes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "float_bounds.h"
#include "optim/multi_tensor_sgd.h"

namespace gpubench {
namespace {

// Parameters of several shapes and sizes, as in a convnet (conv, norm, linear, bias).
std::vector<torch::Tensor> make_parameters() {
  torch::manual_seed(3);
  std::vector<torch::Tensor> parameters;
  for (const auto& shape : std::vector<std::vector<int64_t>>{
           {8, 3, 3, 3}, {8}, {8}, {16, 8, 1, 1}, {10, 64}, {10}, {1}}) {
    parameters.push_back(torch::randn(shape, torch::kFloat64).requires_grad_(true));
  }
  return parameters;
}

std::vector<torch::Tensor> copy_of(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> copies;
  for (const auto& p : parameters) copies.push_back(p.detach().clone().requires_grad_(true));
  return copies;
}

struct Case {
  const char* name;
  torch::optim::SGDOptions options;
};

class MultiTensorSgdMatchesTorchSgd : public ::testing::TestWithParam<Case> {};

// Ten steps with the same gradients on both sides; the last parameter gets no gradient in the
// first three steps (its momentum buffer starts later) and none in step 7 (it must stay put).
TEST_P(MultiTensorSgdMatchesTorchSgd, TenStepsGiveTheSameParameters) {
  const auto reference_parameters = make_parameters();
  const auto ours_parameters = copy_of(reference_parameters);
  torch::optim::SGD reference(reference_parameters, GetParam().options);
  MultiTensorSgd ours(ours_parameters, GetParam().options, OptimizerImplementation::kForeach);
  torch::manual_seed(7);
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
  // The momentum buffer sums the gradients (|g| < 6 for these few normal draws) with gain at
  // most 1 / (1 - momentum): one step moves a weight by at most lr times that.
  const double largest_update = GetParam().options.lr() * 6 / (1 - GetParam().options.momentum());
  for (size_t i = 0; i < reference_parameters.size(); ++i) {
    const torch::Tensor bound =
        testing::same_rule_steps_bound(reference_parameters[i], 10, largest_update);
    EXPECT_LE(testing::worst_share_of_bound(ours_parameters[i], reference_parameters[i], bound),
              1.0)
        << GetParam().name << ", parameter " << i;
    EXPECT_FALSE(torch::equal(ours_parameters[i], make_parameters()[i]))
        << "parameter " << i << " never moved";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Options, MultiTensorSgdMatchesTorchSgd,
    ::testing::Values(
        Case{"momentum_and_weight_decay",
             torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4)},
        Case{"nesterov",
             torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-4)},
        Case{"dampening", torch::optim::SGDOptions(0.05).momentum(0.9).dampening(0.1)},
        Case{"plain", torch::optim::SGDOptions(0.05)}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(MultiTensorSgd, ForeachOnTheCpuAndItsName) {
  EXPECT_EQ(best_sgd_implementation(torch::kCPU), OptimizerImplementation::kForeach);
  EXPECT_EQ(to_string(OptimizerImplementation::kForeach), "foreach");
  EXPECT_EQ(to_string(OptimizerImplementation::kFused), "fused");
  auto parameters = make_parameters();
  EXPECT_THROW(MultiTensorSgd(parameters, torch::optim::SGDOptions(0.1).nesterov(true),
                              OptimizerImplementation::kForeach),
               std::invalid_argument);
}

}  // namespace
}  // namespace gpubench
