// Projections that read one input, stacked into one product at inference
// (modeling/shared_input_products.h): the same outputs as the layers apart, one weight storage,
// held as one stack by the formats that quantise rows apart and apart by the others, and left
// alone where they cannot share (an adapter, a bias on some, autograd recording).
#include <gtest/gtest.h>

#include <cmath>

#include "features/tuning/lora.h"
#include "modeling/adapted_linear.h"
#include "modeling/linear_compute.h"
#include "modeling/shared_input_products.h"
#include "modeling/weight_formats.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

using layers::AdaptedLinear;

// A decoder layer's two groups: attention's q, k and v (GQA widths) and the MLP's gate and up,
// each under its own parent as the models register them.
struct TwoGroups : torch::nn::Module {
  explicit TwoGroups(bool bias) {
    auto attention = register_module("self_attn", std::make_shared<torch::nn::Module>());
    q = attention->register_module("q_proj", AdaptedLinear(64, 64, bias, "q"));
    k = attention->register_module("k_proj", AdaptedLinear(64, 32, bias, "k"));
    v = attention->register_module("v_proj", AdaptedLinear(64, 32, bias, "v"));
    auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
    gate = mlp->register_module("gate_proj", AdaptedLinear(64, 128, false, "gate"));
    up = mlp->register_module("up_proj", AdaptedLinear(64, 128, false, "up"));
    torch::NoGradGuard no_grad;
    for (auto& parameter : parameters()) parameter.normal_(0.0, 0.1);
  }
  std::vector<torch::Tensor> outputs(const torch::Tensor& x) {
    std::vector<torch::Tensor> all = layers::project_together(x, {q, k, v});
    for (const torch::Tensor& t : layers::project_together(x, {gate, up})) all.push_back(t);
    return all;
  }
  AdaptedLinear q{nullptr}, k{nullptr}, v{nullptr}, gate{nullptr}, up{nullptr};
};

void expect_close(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want,
                  double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].sizes(), want[i].sizes()) << "output " << i;
    EXPECT_TRUE(torch::allclose(got[i], want[i], tolerance, tolerance))
        << "output " << i << ": max difference " << (got[i] - want[i]).abs().max().item<double>();
  }
}

// What two float32 computations of the same products may differ by, whatever order each sums
// in (the stack's GEMM may block its sums otherwise than a layer's alone, on another CPU): twice
// gamma_n = n u / (1 - n u) of the sum of the terms' magnitudes, |x| |W|^T + |b|, u = 2^-24.
std::vector<torch::Tensor> summation_bounds(const torch::Tensor& x,
                                            const std::vector<AdaptedLinear>& layers) {
  const double n = static_cast<double>(x.size(-1)), u = std::ldexp(1.0, -24);
  const double gamma = n * u / (1 - n * u);
  std::vector<torch::Tensor> bounds;
  for (const AdaptedLinear& layer : layers) {
    torch::Tensor magnitude = torch::matmul(x.abs(), layer->weight.abs().t());
    if (layer->bias.defined()) magnitude = magnitude + layer->bias.abs();
    bounds.push_back(2 * gamma * magnitude);
  }
  return bounds;
}

void expect_within(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want,
                   const std::vector<torch::Tensor>& bounds) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].sizes(), want[i].sizes()) << "output " << i;
    EXPECT_TRUE(((got[i] - want[i]).abs() <= bounds[i]).all().item<bool>())
        << "output " << i << ": max difference " << (got[i] - want[i]).abs().max().item<double>();
  }
}

TEST(SharedInputProducts, AStackComputesWhatTheLayersComputeFromOneStorage) {
  torch::manual_seed(0);
  for (const bool bias : {false, true}) {
    auto owned = std::make_shared<TwoGroups>(bias);
    TwoGroups& model = *owned;
    const torch::Tensor x = torch::randn({2, 3, 64});
    const c10::InferenceMode inference_mode;
    const std::vector<torch::Tensor> apart = model.outputs(x);
    const std::vector<torch::Tensor> bounds =
        summation_bounds(x, {model.q, model.k, model.v, model.gate, model.up});
    ASSERT_EQ(layers::fuse_shared_input_products(model), 2);
    EXPECT_TRUE(model.q->shared_product());
    EXPECT_EQ(model.q->shared_product(), model.v->shared_product());
    EXPECT_EQ(model.gate->shared_product(), model.up->shared_product());
    EXPECT_NE(model.q->shared_product(), model.gate->shared_product());
    // Each layer's weight is its rows of the one stack.
    EXPECT_EQ(model.k->weight.data_ptr<float>(), model.q->weight.data_ptr<float>() + 64 * 64);
    EXPECT_EQ(model.k->weight.sizes(), (std::vector<int64_t>{32, 64}));
    expect_within(model.outputs(x), apart, bounds);
    // Asked alone, a stacked layer still computes its own output.
    expect_within({model.v(x)}, {apart[2]}, {bounds[2]});
  }
}

// Where a layer has an adapter, a bias that its siblings lack, or autograd records, the layers
// compute apart (and with gradients to each).
TEST(SharedInputProducts, LayersThatCannotShareAreLeftApart) {
  torch::manual_seed(0);
  auto adapted_owned = std::make_shared<TwoGroups>(false);
  TwoGroups& adapted = *adapted_owned;
  tuning::apply_lora(adapted, {"v"}, 4, 8.0);
  EXPECT_EQ(layers::fuse_shared_input_products(adapted), 1) << "gate and up only";
  EXPECT_FALSE(adapted.q->shared_product());

  auto mixed_owned = std::make_shared<TwoGroups>(false);
  TwoGroups& mixed = *mixed_owned;
  mixed.k->bias = mixed.k->register_parameter("bias", torch::zeros({32}));
  EXPECT_EQ(layers::fuse_shared_input_products(mixed), 1);

  auto training_owned = std::make_shared<TwoGroups>(false);
  TwoGroups& training = *training_owned;
  ASSERT_EQ(layers::fuse_shared_input_products(training), 2);
  const torch::Tensor x = torch::randn({2, 64});
  const std::vector<torch::Tensor> outputs = training.outputs(x);
  torch::Tensor total = torch::zeros({});
  for (const torch::Tensor& t : outputs) total = total + t.sum();
  total.backward();
  for (const AdaptedLinear& layer :
       {training.q, training.k, training.v, training.gate, training.up}) {
    ASSERT_TRUE(layer->weight.grad().defined()) << layer->role();
    EXPECT_TRUE(torch::allclose(layer->weight.grad(), x.sum(0).expand({layer->weight.size(0), 64})))
        << layer->role();
  }
}

// Every format holds the stack as one, with the values each layer held alone gives: the
// integer formats and FP8 rowwise scale each row apart, FP8 tensorwise keeps each part's own
// scale. A decode step's rows (3) and a prefill's (24: FP8 quantises them once for the parts).
TEST(SharedInputProducts, FormatsHoldTheStackWithEachLayersValues) {
  if (!compat::kHasIntWeights) {
    GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no int8 or int4 kernels";
  }
  torch::manual_seed(0);
  std::vector<std::pair<std::string, std::string>> formats = {{"int8", ""}, {"int4", ""}};
  if (compat::kHasFp8 && compat::scaled_mm_runs_on_cpu()) {
    formats.emplace_back("fp8", "tensorwise");
    formats.emplace_back("fp8", "rowwise");
  }
  for (const auto& [name, recipe] : formats) {
    layers::WeightFormatOptions options;
    options.group = 32;
    if (!recipe.empty()) options.fp8_recipe = recipe;
    const auto format = layers::make_weight_format(name, options);
    torch::manual_seed(1);
    auto alone_owned = std::make_shared<TwoGroups>(false);
    torch::manual_seed(1);
    auto stacked_owned = std::make_shared<TwoGroups>(false);
    TwoGroups &alone = *alone_owned, &stacked = *stacked_owned;
    alone.to(torch::kBFloat16);
    stacked.to(torch::kBFloat16);
    ASSERT_EQ(layers::fuse_shared_input_products(stacked), 2);
    const layers::QuantizedLayers held_alone = layers::quantize_linear_layers(alone, *format);
    const layers::QuantizedLayers held_stacked = layers::quantize_linear_layers(stacked, *format);
    const std::string where = name + " " + recipe;
    EXPECT_EQ(held_alone.quantized, held_stacked.quantized) << where;
    const c10::InferenceMode inference_mode;
    // The same codes and scales on both sides, bf16 out: each side's output rounded once to
    // bf16 (2^-8 of it), the float32 sums' order negligible beside that; the outputs are of
    // order 1 here, so the same bound serves as the absolute one near zero.
    for (const int64_t rows : {3, 24}) {
      const torch::Tensor x = torch::randn({rows, 64}).to(torch::kBFloat16);
      expect_close(stacked.outputs(x), alone.outputs(x), std::ldexp(1.0, -7));
    }
    EXPECT_TRUE(static_cast<bool>(stacked.q->shared_product())) << where;
    EXPECT_EQ(stacked.k->weight.numel(), 0) << where << ": the held stack replaces the float one";
  }
}

}  // namespace
}  // namespace gpubench
