// precision fp8 (docs/fp8.md): the scaled linear layer against float64 within bounds derived
// from the formats' precision, amax scaling at its edges, a tiny Llama trained and generating in
// FP8 beside bf16, and every refusal. The FP8 maths runs where LibTorch has it (the 2.11 build:
// its CPU _scaled_mm); the Debian 1.13 build checks that it refuses cleanly.
#include <iostream>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "features/precision/fp8_linear.h"
#include "features/precision/precision_policy.h"
#include "infer/greedy_generation.h"
#include "modeling/adapted_linear.h"
#include "modeling/flop_counter.h"
#include "modeling/inference_test_helpers.h"
#include "modeling/linear_compute.h"
#include "modeling/model_registry.h"
#include "optim/optimizer_registry.h"
#include "run/resolve_benchmark.h"
#include "test_helpers.h"
#include "torch_support/compat.h"
#include "train/training_step.h"

namespace gpubench {
namespace {

using torch::Tensor;

#define SKIP_WITHOUT_FP8()                                                       \
  if (!compat::kHasFp8) {                                                        \
    GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no FP8; " \
                 << "Fp8Refusals checks that it refuses";                        \
  }

// Unit roundoff (half the spacing relative to a value) of the normal numbers, and half the
// spacing of the subnormals: e4m3 has 3 mantissa bits and its smallest subnormal is 2^-9;
// e5m2 2 bits and 2^-16. Relative to the scaled value, before the scale gives it back.
struct FormatPrecision {
  double unit_roundoff;
  double subnormal_half_step;
};
constexpr FormatPrecision kE4m3{1.0 / 16, 1.0 / 1024};
constexpr FormatPrecision kE5m2{1.0 / 8, 1.0 / 131072};
constexpr double kBf16UnitRoundoff = 1.0 / 256;

// How far each element of `x` may move when quantized with dequantising scale `scale`: its
// relative rounding, or the subnormals' absolute step, whichever is larger.
Tensor element_error_bound(const Tensor& x, const Tensor& scale, FormatPrecision format) {
  return torch::maximum(x.abs() * format.unit_roundoff,
                        (scale * format.subnormal_half_step).expand_as(x));
}

// |a b - a' b'| <= ea |b| + |a| eb + ea eb for each product; summed over the inner dimension;
// then the output's own rounding (bf16) and float32 accumulation's slack.
Tensor product_error_bound(const Tensor& a, const Tensor& ea, const Tensor& b, const Tensor& eb,
                           const Tensor& reference, double output_roundoff) {
  return torch::matmul(ea, b.abs()) + torch::matmul(a.abs(), eb) + torch::matmul(ea, eb) +
         reference.abs() * output_roundoff + 1e-6;
}

struct ScaledLinearCase {
  fp8::Recipe recipe;
  const char* name;
};

class ScaledLinear : public ::testing::TestWithParam<ScaledLinearCase> {};

// x [32, 64] and W [48, 64] with magnitudes over four decades, so that small values meet the
// subnormals; g the upstream gradient.
TEST_P(ScaledLinear, ForwardAndBothGradientsMatchFloat64WithinTheFormatsPrecision) {
  SKIP_WITHOUT_FP8();
  const fp8::Recipe recipe = GetParam().recipe;
  torch::manual_seed(3);
  const Tensor x0 = torch::randn({32, 64}) * torch::pow(10.0, torch::rand({32, 64}) * 4 - 2);
  const Tensor w0 = torch::randn({48, 64}) * 0.05;
  const Tensor g0 = torch::randn({32, 48}) * 1e-3;
  const Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
  const Tensor y = fp8::scaled_linear(x, w, recipe);
  y.backward(g0.to(torch::kBFloat16));
  ASSERT_EQ(y.scalar_type(), torch::kBFloat16);
  ASSERT_EQ(x.grad().scalar_type(), torch::kFloat);
  ASSERT_EQ(w.grad().scalar_type(), torch::kFloat);

  const Tensor x64 = x0.to(torch::kDouble), w64 = w0.to(torch::kDouble);
  const Tensor g64 = g0.to(torch::kBFloat16).to(torch::kDouble);
  const bool rowwise = recipe == fp8::Recipe::kRowwise;
  const FormatPrecision gradient_format = rowwise ? kE4m3 : kE5m2;
  const auto e4m3 = compat::float8_e4m3();
  const auto gradient_dtype = rowwise ? e4m3 : compat::float8_e5m2();
  auto scale = [&](const Tensor& t, torch::ScalarType format, int64_t along) {
    return (rowwise ? fp8::quantize(t, format, along) : fp8::quantize(t, format))
        .scale.to(torch::kDouble);
  };

  // y = x W^T: x per row, W per row (its output features).
  const Tensor reference = torch::matmul(x64, w64.t());
  const Tensor ex = element_error_bound(x64, scale(x0, e4m3, 1), kE4m3);
  const Tensor ew = element_error_bound(w64, scale(w0, e4m3, 1), kE4m3);
  const Tensor bound = product_error_bound(x64, ex, w64.t(), ew.t(), reference, kBf16UnitRoundoff);
  const Tensor error = (y.to(torch::kDouble) - reference).abs();
  EXPECT_TRUE((error <= bound).all().item<bool>())
      << "worst excess " << (error - bound).max().item<double>();
  EXPECT_GT(error.max().item<double>(), 0) << "no rounding at all: not the FP8 path";

  // dL/dx = g W: g per row, W per column (rowwise).
  const Tensor input_reference = torch::matmul(g64, w64);
  const Tensor eg =
      element_error_bound(g64, scale(g0.to(torch::kBFloat16), gradient_dtype, 1), gradient_format);
  const Tensor ew_columns = element_error_bound(w64, scale(w0, e4m3, 0), kE4m3);
  const Tensor input_bound =
      product_error_bound(g64, eg, w64, ew_columns, input_reference, kBf16UnitRoundoff);
  const Tensor input_error = (x.grad().to(torch::kDouble) - input_reference).abs();
  EXPECT_TRUE((input_error <= input_bound).all().item<bool>())
      << "worst excess " << (input_error - input_bound).max().item<double>();

  // dL/dW = g^T x: g^T per row (output feature), x per column; float32 out for tensorwise.
  const Tensor weight_reference = torch::matmul(g64.t(), x64);
  const Tensor eg_t = element_error_bound(
      g64.t(), scale(g0.to(torch::kBFloat16).t(), gradient_dtype, 1), gradient_format);
  const Tensor ex_columns = element_error_bound(x64, scale(x0, e4m3, 0), kE4m3);
  const Tensor weight_bound = product_error_bound(g64.t(), eg_t, x64, ex_columns, weight_reference,
                                                  rowwise ? kBf16UnitRoundoff : 1e-6);
  const Tensor weight_error = (w.grad().to(torch::kDouble) - weight_reference).abs();
  EXPECT_TRUE((weight_error <= weight_bound).all().item<bool>())
      << "worst excess " << (weight_error - weight_bound).max().item<double>();
}

INSTANTIATE_TEST_SUITE_P(Recipes, ScaledLinear,
                         ::testing::Values(ScaledLinearCase{fp8::Recipe::kTensorwise, "tensorwise"},
                                           ScaledLinearCase{fp8::Recipe::kRowwise, "rowwise"}),
                         [](const auto& info) { return std::string(info.param.name); });

// The values back from a quantized tensor.
Tensor dequantized(const fp8::ScaledTensor& q) {
  return q.data.to(torch::kFloat) * q.scale;
}

TEST(Fp8Scaling, ValuesAtAndBeyondTheFormatsLargestNeitherOverflowNorTurnToNan) {
  SKIP_WITHOUT_FP8();
  for (const auto format : {compat::float8_e4m3(), compat::float8_e5m2()}) {
    const double largest = fp8::format_max(format);
    const Tensor x = torch::tensor({largest, -largest, largest * 0.999, 1e6, -3e7, 1.0});
    const fp8::ScaledTensor q = fp8::quantize(x, format);
    const Tensor back = dequantized(q);
    ASSERT_TRUE(torch::isfinite(back).all().item<bool>()) << back;
    const FormatPrecision precision = format == compat::float8_e4m3() ? kE4m3 : kE5m2;
    // The largest values keep their relative precision; 1.0 is far below amax (3e7) and meets
    // the subnormals or zero, which is what one scale per tensor means.
    const Tensor large = x.narrow(0, 3, 2);
    EXPECT_TRUE(((back.narrow(0, 3, 2) - large).abs() <= large.abs() * precision.unit_roundoff)
                    .all()
                    .item<bool>())
        << back;
    // The scale maps the amax onto the format's largest value exactly.
    EXPECT_FLOAT_EQ(q.data.to(torch::kFloat).abs().max().item<float>(),
                    static_cast<float>(largest));
  }
}

TEST(Fp8Scaling, SmallTensorsAreScaledUpNotFlushedToZero) {
  SKIP_WITHOUT_FP8();
  torch::manual_seed(1);
  for (const double magnitude : {1e-6, 1e-20, 1e-30}) {
    const Tensor x = (torch::rand({256}) + 0.5) * magnitude;  // within a factor 3 of each other
    const fp8::ScaledTensor q = fp8::quantize(x, compat::float8_e4m3());
    EXPECT_TRUE((q.data.to(torch::kFloat) != 0).all().item<bool>()) << magnitude;
    const Tensor relative = (dequantized(q) - x).abs() / x;
    EXPECT_LE(relative.max().item<double>(), kE4m3.unit_roundoff) << magnitude;
  }
}

TEST(Fp8Scaling, AnAllZeroTensorGivesZerosAndAFiniteScale) {
  SKIP_WITHOUT_FP8();
  for (const auto format : {compat::float8_e4m3(), compat::float8_e5m2()}) {
    const fp8::ScaledTensor whole = fp8::quantize(torch::zeros({16, 32}), format);
    EXPECT_TRUE(torch::isfinite(whole.scale).all().item<bool>());
    EXPECT_TRUE((dequantized(whole) == 0).all().item<bool>());
    // Rowwise: one row of zeros among others.
    Tensor rows = torch::randn({16, 32});
    rows[3].zero_();
    const fp8::ScaledTensor per_row = fp8::quantize(rows, format, 1);
    ASSERT_EQ(per_row.scale.sizes(), (std::vector<int64_t>{16, 1}));
    EXPECT_TRUE(torch::isfinite(dequantized(per_row)).all().item<bool>());
    EXPECT_TRUE((dequantized(per_row)[3] == 0).all().item<bool>());
  }
  const Tensor x = torch::zeros({32, 64}, torch::requires_grad());
  const Tensor w = torch::zeros({16, 64}, torch::requires_grad());
  const Tensor y = fp8::scaled_linear(x, w, fp8::Recipe::kTensorwise);
  y.sum().backward();
  EXPECT_FALSE(torch::isnan(y).any().item<bool>());
  EXPECT_FALSE(torch::isnan(x.grad()).any().item<bool>());
  EXPECT_FALSE(torch::isnan(w.grad()).any().item<bool>());
}

TEST(Fp8Scaling, RowwiseScalesArePowersOfTwo) {
  SKIP_WITHOUT_FP8();
  torch::manual_seed(2);
  const fp8::ScaledTensor q = fp8::quantize(torch::randn({8, 64}) * 3, compat::float8_e4m3(), 1);
  const Tensor exponent = torch::log2(q.scale);
  EXPECT_TRUE((exponent == torch::round(exponent)).all().item<bool>()) << q.scale;
}

// Which products take the FP8 path: aligned shapes while a scope is active, and the share the
// FlopCounter reports from them.
TEST(Fp8Layers, OnlyAlignedProductsUnderTheScopeRunInFp8AndTheCountSaysSo) {
  SKIP_WITHOUT_FP8();
  EXPECT_TRUE(fp8::aligned(32, 64, 48, true));
  EXPECT_FALSE(fp8::aligned(32, 64, 2, true));  // BERT's next-sentence head: 2 outputs
  EXPECT_FALSE(fp8::aligned(8, 64, 48, true));  // 8 rows: the weight gradient's inner side
  EXPECT_TRUE(fp8::aligned(8, 64, 48, false));  // a frozen weight has no such product
  layers::AdaptedLinear aligned(64, 48, true, "q"), unaligned(64, 2, true, "");
  torch::nn::init::normal_(aligned->weight);
  torch::nn::init::normal_(unaligned->weight);
  const Tensor x = torch::randn({2, 16, 64});
  FlopCounter counter;
  {
    fp8::TrainingScope scope(fp8::Recipe::kTensorwise);
    EXPECT_EQ(aligned(x).scalar_type(), torch::kBFloat16);
    EXPECT_EQ(unaligned(x).scalar_type(), torch::kFloat);  // autocast is off here: float32
  }
  const FlopCounts& counts = counter.counts();
  EXPECT_EQ(counts.multiply_adds, 32 * 64 * 48 + 32 * 64 * 2);
  EXPECT_EQ(counts.fp8_multiply_adds, 32 * 64 * 48);
  EXPECT_DOUBLE_EQ(counts.fp8_training_share(), 48.0 / 50.0);
  // Outside the scope nothing runs in FP8.
  FlopCounter after;
  aligned(x);
  EXPECT_EQ(after.counts().fp8_multiply_adds, 0);
}

// The tiny Llama (every projection's sides multiples of 16), LoRA on every projection where the
// tuning is lora, in training mode.
std::unique_ptr<TrainableModel> tiny_llama(Tuning tuning) {
  torch::manual_seed(11);
  ModelOptions options;
  options.seq_len = 16;
  options.tuning = tuning;
  options.lora.targets = {"q", "k", "v", "o", "gate", "up", "down"};
  auto model = ModelRegistry::instance().get("test-tiny-llama").instantiate(options);
  model->module().train();
  return model;
}

// The tiny Llama on one fixed batch.
std::vector<double> tiny_llama_losses(Precision precision, Tuning tuning, int steps) {
  auto model = tiny_llama(tuning);
  torch::manual_seed(12);
  const SyntheticBatch batch = model->synthetic_batch(2, torch::kCPU, false);
  OptimizerSettings settings = optimizer_settings_for("adamw", 2);
  settings.learning_rate = tuning == Tuning::kLora ? 1e-2 : 3e-3;
  TrainingStep step(*model, PrecisionPolicy(precision, torch::kCPU), settings);
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(step.run(batch).item<double>());
  if (precision == Precision::kFp8) {
    // Every projection and the head ran in FP8; the attention products (and LoRA's adapters,
    // here of rank 16 on 32 features: a large part) did not.
    const double share = step.forward_counts().fp8_training_share();
    EXPECT_GT(share, tuning == Tuning::kFull ? 0.8 : 0.3);
    EXPECT_LT(share, 1.0);
  }
  return losses;
}

// FP8 follows bf16's loss curve: at every step within 0.05 nats (about 1 % of the starting
// loss, ln 256 = 5.5; 2.11's CPU kernels gave at most 0.013) of it, while both fall by more than
// 0.5 nats (LoRA on a frozen random base learns slowest: about 0.7 in 100 steps), several times the
// tolerance. The curves start from the same weights and batch; what differs is FP8's rounding of
// the products (3 mantissa bits against bf16's 7), which moves each step's update slightly.
void expect_fp8_follows_bf16(Tuning tuning) {
  constexpr int kSteps = 100;
  constexpr double kTolerance = 0.05, kLearned = 0.5;
  const std::vector<double> bf16 = tiny_llama_losses(Precision::kBf16, tuning, kSteps);
  const std::vector<double> fp8 = tiny_llama_losses(Precision::kFp8, tuning, kSteps);
  double worst = 0;
  for (int i = 0; i < kSteps; ++i) worst = std::max(worst, std::abs(fp8[i] - bf16[i]));
  EXPECT_LE(worst, kTolerance);
  EXPECT_LT(bf16.back(), bf16.front() - kLearned) << bf16.front() << " -> " << bf16.back();
  EXPECT_LT(fp8.back(), fp8.front() - kLearned) << fp8.front() << " -> " << fp8.back();
  EXPECT_NE(fp8, bf16) << "identical curves: FP8 did not run";
  std::cout << "fp8 against bf16: worst difference " << worst << " nats; bf16 " << bf16.front()
            << " -> " << bf16.back() << ", fp8 " << fp8.front() << " -> " << fp8.back() << "\n";
}

TEST(Fp8Training, ATinyLlamaFollowsTheBf16LossCurveOver100Steps) {
  SKIP_WITHOUT_FP8();
  expect_fp8_follows_bf16(Tuning::kFull);
}

TEST(Fp8Training, LoraOnAFrozenFp8BaseFollowsTheBf16LossCurve) {
  SKIP_WITHOUT_FP8();
  expect_fp8_follows_bf16(Tuning::kLora);
}

// How often the tiny Llama's weights, and its products' inputs, are cast to e4m3 in each of three
// FP8 training steps.
struct StepQuantizations {
  std::vector<int64_t> frozen, trainable, inputs;
};
StepQuantizations weight_quantizations_per_step(Tuning tuning, fp8::Recipe recipe) {
  auto model = tiny_llama(tuning);
  const SyntheticBatch batch = model->synthetic_batch(2, torch::kCPU, false);
  TrainingStep step(*model, PrecisionPolicy(Precision::kFp8, torch::kCPU, recipe),
                    optimizer_settings_for("adamw", 2));
  StepQuantizations per_step;
  for (int i = 0; i < 3; ++i) {
    const fp8::WeightQuantizations before = fp8::weight_quantizations();
    const int64_t inputs_before = fp8::training_input_quantizations();
    step.run(batch);
    const fp8::WeightQuantizations after = fp8::weight_quantizations();
    per_step.frozen.push_back(after.frozen - before.frozen);
    per_step.trainable.push_back(after.trainable - before.trainable);
    per_step.inputs.push_back(fp8::training_input_quantizations() - inputs_before);
  }
  return per_step;
}

// The tiny Llama's FP8 products: 2 layers of 7 projections, and the head. LoRA's frozen base
// weights are cast on the first step and served from their kept copies after (rowwise's
// column-scaled copy for the input gradient too); its adapters stay in bf16. A full fine-tune's
// weights change at every step, so they are cast at every step: once (tensorwise), or twice
// (rowwise: the input gradient scales the weight's columns). The inputs: q, k and v read one,
// and gate and up another, each quantised once: 4 a layer and the head's, 9 a step where the 15
// products quantised 15.
TEST(Fp8Training, FrozenWeightsAreQuantisedOnceAndTrainableOnesEveryStep) {
  SKIP_WITHOUT_FP8();
  using V = std::vector<int64_t>;
  for (const fp8::Recipe recipe : {fp8::Recipe::kTensorwise, fp8::Recipe::kRowwise}) {
    const StepQuantizations lora = weight_quantizations_per_step(Tuning::kLora, recipe);
    EXPECT_EQ(lora.frozen, (V{15, 0, 0}));
    EXPECT_EQ(lora.trainable, (V{0, 0, 0}));
    EXPECT_EQ(lora.inputs, (V{9, 9, 9}));
    const StepQuantizations full = weight_quantizations_per_step(Tuning::kFull, recipe);
    const int64_t per_step = recipe == fp8::Recipe::kRowwise ? 30 : 15;
    EXPECT_EQ(full.frozen, (V{0, 0, 0}));
    EXPECT_EQ(full.trainable, (V{per_step, per_step, per_step}));
    EXPECT_EQ(full.inputs, (V{9, 9, 9}));
  }
}

// Products that read one input in turn quantise it once, with the values and gradients of
// quantising it for each; an in-place write to the input, or another recipe, quantises again.
TEST(Fp8Training, AnInputThatProjectionsShareIsQuantisedOnce) {
  SKIP_WITHOUT_FP8();
  torch::manual_seed(0);
  for (const fp8::Recipe recipe : {fp8::Recipe::kTensorwise, fp8::Recipe::kRowwise}) {
    const torch::Tensor x = torch::randn({32, 64}).to(torch::kBFloat16).requires_grad_();
    std::vector<torch::Tensor> weights;
    for (int i = 0; i < 3; ++i) {
      weights.push_back(torch::randn({48, 64}).to(torch::kBFloat16).requires_grad_());
    }
    const int64_t before = fp8::training_input_quantizations();
    torch::Tensor shared_sum = torch::zeros({});
    std::vector<torch::Tensor> shared;
    for (const torch::Tensor& w : weights) {
      shared.push_back(fp8::scaled_linear(x, w, recipe));
      shared_sum = shared_sum + shared.back().to(torch::kFloat).sum();
    }
    EXPECT_EQ(fp8::training_input_quantizations() - before, 1) << fp8::recipe_name(recipe);
    shared_sum.backward();
    const torch::Tensor x_apart = x.detach().clone().requires_grad_();
    torch::Tensor apart_sum = torch::zeros({});
    for (size_t i = 0; i < weights.size(); ++i) {
      // A copy of x for each: another storage, so each is quantised.
      const torch::Tensor own = x_apart * 1;
      const torch::Tensor out = fp8::scaled_linear(own, weights[i].detach(), recipe);
      EXPECT_TRUE(torch::equal(out, shared[i])) << fp8::recipe_name(recipe) << " product " << i;
      apart_sum = apart_sum + out.to(torch::kFloat).sum();
    }
    apart_sum.backward();
    EXPECT_TRUE(torch::equal(x.grad(), x_apart.grad())) << fp8::recipe_name(recipe);
    const int64_t written = fp8::training_input_quantizations();
    {
      torch::NoGradGuard no_grad;
      x.mul_(2);
    }
    fp8::scaled_linear(x, weights[0], recipe);
    EXPECT_EQ(fp8::training_input_quantizations() - written, 1) << "after an in-place write";
  }
}

// A frozen weight's input-gradient operand is kept in the layout scaled_mm takes as its second
// operand (column-major), so that no backward copies a transpose of it; the forward's operand is
// the weight's own layout, which its product reads transposed for free. The values: the
// tensorwise one is the forward's codes, the rowwise one scaled along the columns.
TEST(Fp8Training, AFrozenWeightsOperandsNeedNoCopyInEitherProduct) {
  SKIP_WITHOUT_FP8();
  torch::manual_seed(0);
  const torch::Tensor weight = torch::randn({48, 32}).to(torch::kBFloat16);
  for (const fp8::Recipe recipe : {fp8::Recipe::kTensorwise, fp8::Recipe::kRowwise}) {
    fp8::FrozenWeightOperands frozen;
    frozen.refresh(weight, recipe);
    // What the product does to its second operand b [K, N]: b.data.t().contiguous().t().
    const auto copied = [](const torch::Tensor& b_data) {
      return b_data.t().contiguous().data_ptr() != b_data.t().data_ptr();
    };
    EXPECT_FALSE(copied(frozen.forward().data.t())) << fp8::recipe_name(recipe) << ": forward";
    EXPECT_FALSE(copied(frozen.input_gradient().data)) << fp8::recipe_name(recipe);
    EXPECT_EQ(frozen.input_gradient().data.sizes(), weight.sizes());
    const fp8::ScaledTensor expected = recipe == fp8::Recipe::kRowwise
                                           ? fp8::quantize(weight, compat::float8_e4m3(), 0)
                                           : frozen.forward();
    EXPECT_TRUE(torch::equal(frozen.input_gradient().data.to(torch::kFloat),
                             expected.data.to(torch::kFloat)));
    EXPECT_TRUE(torch::equal(frozen.input_gradient().scale, expected.scale));
  }
}

// A tiny Llama taught one sequence (fp32, so both sides start from the same weights), then asked
// to continue its first half: greedy tokens with bf16 weights, and with the linear layers'
// weights quantised to e4m3 (and the key/value cache in FP8).
TEST(Fp8Inference, GreedyTokensOfATaughtTinyLlamaMatchBf16) {
  SKIP_WITHOUT_FP8();
  constexpr int64_t kPrompt = 16, kGenerate = 16;
  auto teach = [&] { return testing::taught_tiny_llama(kPrompt + kGenerate); };
  auto generate = [&](bool fp8, bool fp8_cache) {
    auto [model, sequence] = teach();
    model->cast_for_inference(torch::kBFloat16);
    if (fp8) {
      const layers::QuantizedLayers counts =
          layers::quantize_linear_layers(model->module(), *layers::make_weight_format("fp8"));
      EXPECT_EQ(counts.quantized, 2 * 7 + 1);  // every projection of both blocks, and the head
    }
    const c10::InferenceMode inference_mode;
    TextGenerator& generator = *model->text_generator();
    KvCache cache = generator.allocate_cache(
        1, kPrompt + kGenerate, torch::kCPU,
        fp8_cache ? compat::float8_e4m3() : torch::ScalarType(torch::kBFloat16));
    const Tensor prompt = sequence.narrow(1, 0, kPrompt);
    const Tensor taught = sequence.narrow(1, kPrompt, kGenerate - 1);
    const Tensor tokens = generate_greedy(generator, cache, prompt, kGenerate, torch::kCPU).tokens;
    return std::make_pair(tokens, taught);
  };
  const auto [bf16, taught] = generate(false, false);
  // The model learned the sequence: bf16 continues it (else agreement would mean little).
  EXPECT_TRUE(torch::equal(bf16.narrow(1, 0, kGenerate - 1), taught)) << bf16 << taught;
  EXPECT_TRUE(torch::equal(generate(true, false).first, bf16));
  EXPECT_TRUE(torch::equal(generate(true, true).first, bf16));
}

// Every refusal, on every build: LibTorch 1.x first, then the GPU, the CPU, the model.
using testing::refusal;
const auto gpu = testing::one_gpu;

BenchmarkRequest fp8_request(const std::string& model, DeviceKind device) {
  BenchmarkRequest request;
  request.model = model;
  request.precision = Precision::kFp8;
  request.device = device;
  return request;
}

TEST(Fp8Refusals, LibTorch1xSaysItNeeds25OrLater) {
  if (compat::kHasFp8) GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has FP8";
  const std::string expected =
      "precision 'fp8' needs LibTorch 2.5 or later (at::_scaled_mm with rowwise scales); this "
      "gpubench is built with LibTorch " +
      compat::libtorch_version();
  EXPECT_EQ(refusal(fp8_request("bert-large", DeviceKind::kCpu), MachineFacts{}), expected);
  EXPECT_EQ(refusal(fp8_request("llama-3-8b", DeviceKind::kCuda), gpu("NVIDIA H200", 90)),
            expected);
  BenchmarkRequest cache;
  cache.model = "llama-3.2-1b";
  cache.task = Task::kInfer;
  cache.device = DeviceKind::kCpu;
  cache.kv_cache = "fp8";
  EXPECT_EQ(refusal(cache, MachineFacts{}),
            "kv_cache fp8 needs LibTorch 2.5 or later; this gpubench is built with LibTorch " +
                compat::libtorch_version());
}

TEST(Fp8Refusals, AGpuWithoutFp8TensorCoresIsNamedWithItsCapability) {
  SKIP_WITHOUT_FP8();
  for (const auto& [name, capability] : {std::pair{"NVIDIA A40", 86},
                                         {"NVIDIA A100-SXM4-80GB", 80},
                                         {"NVIDIA RTX A6000", 86},
                                         {"Tesla V100-SXM2-32GB", 70}}) {
    EXPECT_EQ(refusal(fp8_request("bert-large", DeviceKind::kCuda), gpu(name, capability)),
              "precision 'fp8' needs FP8 tensor cores (compute capability 8.9 or later: L4, L40S, "
              "RTX 4090, H100, H200); " +
                  std::string(name) + " has compute capability " + std::to_string(capability / 10) +
                  "." + std::to_string(capability % 10) + "; use bf16");
  }
  for (const auto& [name, capability] : {std::pair{"NVIDIA L40S", 89}, {"NVIDIA H200", 90}}) {
    EXPECT_EQ(refusal(fp8_request("bert-large", DeviceKind::kCuda), gpu(name, capability)), "");
  }
}

TEST(Fp8Refusals, TheCpuRunsFp8WhereScaledMmRunsThere) {
  SKIP_WITHOUT_FP8();
  MachineFacts cpu;
  cpu.cpu_cores = 2;
  EXPECT_EQ(refusal(fp8_request("bert-large", DeviceKind::kCpu), cpu),
            compat::scaled_mm_runs_on_cpu()
                ? ""
                : "precision 'fp8' on the CPU needs a LibTorch whose _scaled_mm runs there "
                  "(2.11's does); LibTorch " +
                      compat::libtorch_version() + " has none");
}

TEST(Fp8Refusals, ConvnetsTheRecipeAndTheCacheOutsideTheirPlace) {
  SKIP_WITHOUT_FP8();
  const MachineFacts h200 = gpu("NVIDIA H200", 90);
  EXPECT_EQ(refusal(fp8_request("resnet50", DeviceKind::kCuda), h200),
            "precision 'fp8' runs the linear layers' products in FP8, and resnet50 declares no "
            "FP8-eligible layers (FP8 convolutions are not a PyTorch path); use bf16");
  BenchmarkRequest recipe;
  recipe.model = "bert-large";
  recipe.precision = Precision::kBf16;
  recipe.fp8_recipe = "rowwise";
  EXPECT_EQ(refusal(recipe, h200), "fp8_recipe applies to precision fp8 only");
  BenchmarkRequest training_cache = fp8_request("llama-3-8b", DeviceKind::kCuda);
  training_cache.kv_cache = "fp8";
  EXPECT_EQ(refusal(training_cache, h200),
            "kv_cache fp8 applies to gpubench infer of the models that generate text "
            "(gpt-oss-120b, gpt-oss-20b, llama-2-7b, llama-3-8b, llama-3.1-405b, llama-3.1-70b, "
            "llama-3.1-8b, llama-3.2-1b)");
  // What resolves: the recipe kept for fp8, none for the other precisions.
  BenchmarkRequest rowwise = fp8_request("llama-3-8b", DeviceKind::kCuda);
  rowwise.fp8_recipe = "rowwise";
  EXPECT_EQ(resolve(rowwise, h200).fp8_recipe, "rowwise");
  EXPECT_EQ(resolve(fp8_request("llama-3-8b", DeviceKind::kCuda), h200).fp8_recipe, "tensorwise");
  recipe.fp8_recipe.reset();
  EXPECT_EQ(resolve(recipe, h200).fp8_recipe, "");
}

}  // namespace
}  // namespace gpubench
