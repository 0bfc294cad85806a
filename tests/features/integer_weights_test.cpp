// Weight-only int8 and int4 (docs/inference.md#integer-weights): the round trip within half a
// quantisation step, LibTorch's kernels against the dequantised weight, a tiny Llama's logits and
// greedy tokens beside bf16, and every refusal. The kernels run where LibTorch has them (the 2.11
// build); the Debian 1.13 build checks that it refuses cleanly.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "features/precision/precision_policy.h"
#include "features/weights/int4_weights.h"
#include "features/weights/int8_weights.h"
#include "infer/greedy_generation.h"
#include "infer/inference_model.h"
#include "launcher/prediction_subject.h"
#include "modeling/inference_test_helpers.h"
#include "modeling/linear_compute.h"
#include "modeling/model_registry.h"
#include "optim/optimizer_registry.h"
#include "run/resolve_benchmark.h"
#include "test_helpers.h"
#include "torch_support/compat.h"
#include "train/training_step.h"

namespace gpubench::integer_weights_tests {
namespace {

using torch::Tensor;

#define SKIP_WITHOUT_INT_WEIGHTS()                                                             \
  if (!compat::kHasIntWeights) {                                                               \
    GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no int4/int8 kernels; " \
                 << "IntegerWeightRefusals checks that it refuses";                            \
  }

double relative_error(const Tensor& value, const Tensor& reference) {
  const Tensor ref = reference.to(torch::kDouble);
  return ((value.to(torch::kDouble) - ref).norm() / ref.norm()).item<double>();
}

TEST(IntegerWeights, Int4RulesAreEachDevicesKernels) {
  constexpr DeviceKind kCuda = DeviceKind::kCuda, kCpu = DeviceKind::kCpu;
  EXPECT_EQ(integer_weights::why_not_int4(4096, 14336, 128, kCuda), "");
  EXPECT_EQ(integer_weights::why_not_int4(1024, 8192, 32, kCpu), "");
  EXPECT_EQ(integer_weights::why_not_int4(64, 32, 64, kCuda),
            "the group size 64 does not divide its 32 input features");
  EXPECT_EQ(integer_weights::why_not_int4(64, 48, 16, kCpu),
            "its 48 input features are not a multiple of 32");
  EXPECT_EQ(integer_weights::why_not_int4(12, 64, 32, kCuda),
            "its 12 output features are not a multiple of 8");
  // CUDA packs 8 outputs where the CPU's kernel packs 16 ("expect N to be dividable by 16").
  EXPECT_EQ(integer_weights::why_not_int4(8, 64, 32, kCuda), "");
  EXPECT_EQ(integer_weights::why_not_int4(8, 64, 32, kCpu),
            "its 8 output features are not a multiple of 16 (the CPU kernel's rule)");
}

// Each weight comes back within half its group's step (plus float32's rounding), and each
// group's extremes are codes 0 and 15.
TEST(IntegerWeights, Int4RoundTripIsWithinHalfAStep) {
  torch::manual_seed(3);
  constexpr int64_t kGroup = 32;
  const Tensor weight = torch::randn({16, 128}) * 0.05;
  const integer_weights::Int4Codes codes = integer_weights::int4_codes(weight, kGroup);
  EXPECT_EQ(codes.codes.min().item<int>(), 0);
  EXPECT_EQ(codes.codes.max().item<int>(), 15);
  const Tensor back = integer_weights::dequantize(codes, kGroup);
  const Tensor half_step = codes.scales.repeat_interleave(kGroup, 1) / 2;
  EXPECT_TRUE(((back - weight).abs() <= half_step * (1 + 1e-5) + 1e-7).all().item<bool>())
      << ((back - weight).abs() / half_step).max();
}

TEST(IntegerWeights, Int8RoundTripIsWithinHalfAStep) {
  torch::manual_seed(4);
  const Tensor weight = torch::randn({24, 64});
  const integer_weights::Int8Weight quantized =
      integer_weights::quantize_int8(weight, torch::kFloat);
  EXPECT_EQ(quantized.codes.scalar_type(), torch::kChar);
  EXPECT_EQ(quantized.codes.abs().amax(1).min().item<int>(), 127);  // each row's amax is 127
  const Tensor back = quantized.codes.to(torch::kFloat) * quantized.scales.unsqueeze(1);
  EXPECT_TRUE(
      ((back - weight).abs() <= quantized.scales.unsqueeze(1) / 2 * (1 + 1e-5)).all().item<bool>());
}

// LibTorch's kernels compute the product of the dequantised weight: bf16 activations, float
// accumulation, bf16 out (a relative error of a few bf16 roundings). On the CPU, and on a CUDA
// device where there is one (its own int4 packing: two codes a byte).
void check_kernels_on(torch::Device device) {
  torch::manual_seed(5);
  const Tensor weight = torch::randn({64, 256}).to(device, torch::kBFloat16);
  const Tensor input = torch::randn({3, 5, 256}).to(device, torch::kBFloat16);
  for (const int64_t group : integer_weights::kInt4Groups) {
    const integer_weights::Int4Weight int4 =
        integer_weights::quantize_int4(weight, group, torch::kBFloat16);
    const Tensor dequantised =
        integer_weights::dequantize(integer_weights::int4_codes(weight, group), group);
    const Tensor output = integer_weights::linear(input, int4);
    EXPECT_EQ(output.sizes(), (std::vector<int64_t>{3, 5, 64}));
    EXPECT_EQ(output.scalar_type(), torch::kBFloat16);
    EXPECT_LT(relative_error(output, torch::matmul(input.to(torch::kFloat), dequantised.t())), 1e-2)
        << "group " << group;
  }
  const integer_weights::Int8Weight int8 = integer_weights::quantize_int8(weight, torch::kBFloat16);
  const Tensor dequantised =
      int8.codes.to(torch::kFloat) * int8.scales.to(torch::kFloat).unsqueeze(1);
  EXPECT_LT(relative_error(integer_weights::linear(input, int8),
                           torch::matmul(input.to(torch::kFloat), dequantised.t())),
            1e-2);
}

TEST(IntegerWeights, KernelsComputeTheDequantisedProduct) {
  SKIP_WITHOUT_INT_WEIGHTS();
  check_kernels_on(torch::kCPU);
}

TEST(IntegerWeights, CudaKernelsComputeTheDequantisedProduct) {
  SKIP_WITHOUT_INT_WEIGHTS();
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device (the GPU check runs it)";
  check_kernels_on(torch::Device(torch::kCUDA, 0));
}

// A tiny Llama taught one sequence in fp32, then asked to continue its first half with bf16
// weights and with int8 and int4 weights: the logits after the prompt within the formats' stated
// tolerance of bf16's, and the greedy tokens the same (the mismatch rate printed otherwise).
TEST(IntegerWeights, ATaughtTinyLlamaGeneratesAsInBf16) {
  SKIP_WITHOUT_INT_WEIGHTS();
  constexpr int64_t kPrompt = 16, kGenerate = 16;
  struct Generated {
    Tensor logits, tokens, taught;
    layers::QuantizedLayers counts;
  };
  auto generate = [&](std::shared_ptr<const layers::WeightFormat> format) {
    auto [model, sequence] = testing::taught_tiny_llama(kPrompt + kGenerate);
    model->cast_for_inference(torch::kBFloat16);
    Generated out;
    if (format) out.counts = layers::quantize_linear_layers(model->module(), *format);
    const c10::InferenceMode inference_mode;
    const Tensor prompt = sequence.narrow(1, 0, kPrompt);
    TextGenerator& generator = *model->text_generator();
    out.logits = generator.last_logits_without_cache(prompt).to(torch::kFloat);
    KvCache cache = generator.allocate_cache(1, kPrompt + kGenerate, torch::kCPU, torch::kBFloat16);
    out.tokens = generate_greedy(generator, cache, prompt, kGenerate, torch::kCPU).tokens;
    out.taught = sequence.narrow(1, kPrompt, kGenerate - 1);
    return out;
  };
  const Generated bf16 = generate(nullptr);
  ASSERT_TRUE(torch::equal(bf16.tokens.narrow(1, 0, kGenerate - 1), bf16.taught));
  const auto int8 = layers::make_weight_format("int8");
  layers::WeightFormatOptions groups_of_32;
  groups_of_32.group = 32;
  const auto int4 = layers::make_weight_format("int4", groups_of_32);
  // The stated tolerances: int8 keeps 8 bits a weight (about 1% of the logits); int4 with groups
  // of 32 about 4 bits (about 10%).
  for (const auto& [format, tolerance] : {std::pair{int8, 0.03}, std::pair{int4, 0.15}}) {
    const Generated quantized = generate(format);
    EXPECT_EQ(quantized.counts.quantized, 2 * 7 + 1);  // both blocks' projections, the head
    EXPECT_EQ(quantized.counts.kept, 0);
    const double error = relative_error(quantized.logits, bf16.logits);
    EXPECT_LT(error, tolerance) << "format " << format->name();
    const double mismatches =
        quantized.tokens.ne(bf16.tokens).to(torch::kFloat).mean().item<double>();
    EXPECT_EQ(mismatches, 0.0) << "format " << format->name() << ": " << mismatches * 100
                               << "% of the greedy tokens differ; logits' "
                               << "relative error " << error;
  }
}

BenchmarkRequest infer_request(const std::string& model, const std::string& weights) {
  BenchmarkRequest request;
  request.model = model;
  request.task = Task::kInfer;
  request.device = DeviceKind::kCpu;
  request.prompt_len = 8;
  request.gen_len = 4;
  request.weights = weights;
  return request;
}

using testing::refusal;
const auto gpu = testing::one_gpu;

TEST(IntegerWeightRefusals, LibTorch1xSaysItNeeds26OrLater) {
  if (compat::kHasIntWeights)
    GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has them";
  for (const std::string weights : {"int8", "int4"}) {
    BenchmarkRequest request = infer_request("llama-3.1-8b", weights);
    EXPECT_EQ(refusal(request), "weights " + weights +
                                    " needs LibTorch 2.6 or later (its int8/int4 matmul kernels); "
                                    "this gpubench is built with LibTorch " +
                                    compat::libtorch_version());
  }
}

// The settings' own rules hold on every build; a model's shapes come after LibTorch's kernels,
// which no option fixes (hostile input, round 4), and fit checks them on its stand-in.
TEST(IntegerWeightRefusals, EachBadSettingIsNamed) {
  BenchmarkRequest group = infer_request("test-tiny-llama", "int4");
  group.weight_group = 64;
  const std::string shapes =
      "weights int4 with weight_group 64: test-tiny-llama's [32, 32] weight cannot be held "
      "so: the group size 64 does not divide its 32 input features";
  if (compat::kHasIntWeights) {
    EXPECT_EQ(refusal(group), shapes);
  } else {
    EXPECT_EQ(refusal(group).rfind("weights int4 needs LibTorch 2.6 or later", 0), 0u)
        << refusal(group);
    BenchmarkRequest fit_request = group;
    fit_request.device = DeviceKind::kCpu;
    try {
      resolve_for_prediction(fit_request);
      ADD_FAILURE() << "fit's stand-in for int4 checks the shapes";
    } catch (const UsageError& error) {
      EXPECT_EQ(std::string(error.what()), shapes);
    }
  }
  // bf16 is a precision's name: said so, not called an integer format.
  EXPECT_EQ(refusal(infer_request("test-tiny-bert", "bf16")),
            "weights 'bf16' names a precision, and chooses among weight formats for the models "
            "that hold others (llama-2-7b, llama-3-8b, llama-3.1-405b, llama-3.1-70b, "
            "llama-3.1-8b, llama-3.2-1b); test-tiny-bert holds the precision's: use --precision "
            "bf16");
  group.weight_group = 48;
  EXPECT_EQ(refusal(group), "weight_group must be 32, 64 or 128, got 48");
  BenchmarkRequest group_without_int4 = infer_request("test-tiny-llama", "int8");
  group_without_int4.weight_group = 32;
  EXPECT_EQ(refusal(group_without_int4), "weight_group applies to weights int4 only");
  EXPECT_EQ(refusal(infer_request("resnet50", "int4")),
            "weights 'int4' applies to the models that hold integer weights (" +
                std::string("llama-2-7b, llama-3-8b, llama-3.1-405b, llama-3.1-70b, llama-3.1-8b, "
                            "llama-3.2-1b") +
                "); resnet50 holds the precision's (--precision)");
  BenchmarkRequest training = infer_request("llama-3.1-8b", "int4");
  training.task = Task::kTrain;
  training.prompt_len.reset();
  training.gen_len.reset();
  EXPECT_EQ(refusal(training),
            "weights 'int4' applies to gpubench infer; training holds its weights in the "
            "precision's dtype (--precision)");
  BenchmarkRequest fp16 = infer_request("llama-3.1-8b", "int8");
  fp16.precision = Precision::kFp16;
  EXPECT_EQ(refusal(fp16),
            "weights 'int8' computes in bf16: precision 'fp16' does not go with it (use "
            "--precision bf16 or leave it out)");
  BenchmarkRequest fp8 = infer_request("llama-3.1-8b", "fp8");
  fp8.precision = Precision::kBf16;
  EXPECT_EQ(refusal(fp8),
            "weights 'fp8' is precision fp8's: precision 'bf16' does not go with it (use "
            "--precision fp8 or leave it out)");
}

TEST(IntegerWeightRefusals, Int4NeedsAnAmpereOrLaterGpu) {
  SKIP_WITHOUT_INT_WEIGHTS();
  BenchmarkRequest request = infer_request("llama-3.1-8b", "int4");
  request.device = DeviceKind::kCuda;
  EXPECT_EQ(refusal(request, gpu("Tesla V100-SXM2-32GB", 70)),
            "weights int4 needs compute capability 8.0 or later on CUDA (LibTorch's int4 kernel); "
            "Tesla V100-SXM2-32GB has 7.0");
  EXPECT_EQ(refusal(request, gpu("NVIDIA A40", 86)), "");
  request.weights = "int8";
  EXPECT_EQ(refusal(request, gpu("Tesla V100-SXM2-32GB", 70)), "");
}

// A float format is the precision's: given alone it sets the precision and is stored as auto, so
// that `--weights bf16` and `--precision bf16` are one benchmark.
TEST(IntegerWeights, FloatFormatsAreThePrecisions) {
  MachineFacts cpu;
  cpu.cpu_cores = 2;
  const ResolvedBenchmark bf16 = resolve(infer_request("test-tiny-llama", "bf16"), cpu);
  EXPECT_EQ(bf16.precision, Precision::kBf16);
  EXPECT_EQ(bf16.weights, "auto");
  EXPECT_EQ(bf16.weight_group, 0);
  const ResolvedBenchmark automatic = resolve(infer_request("test-tiny-llama", "auto"), cpu);
  EXPECT_EQ(automatic.precision, Precision::kFp32);
  EXPECT_EQ(automatic.weights, "auto");
  if (!compat::kHasIntWeights) return;
  BenchmarkRequest int4 = infer_request("test-tiny-llama", "int4");
  int4.weight_group = 32;
  const ResolvedBenchmark resolved = resolve(int4, cpu);
  EXPECT_EQ(resolved.precision, Precision::kBf16);
  EXPECT_EQ(resolved.weights, "int4");
  EXPECT_EQ(resolved.weight_group, 32);
}

// fit counts the formats it cannot run here (launcher/prediction_subject.h) by their layouts: by
// hand on every build, and against what quantising a tiny Llama holds where the kernels run.
TEST(IntegerWeights, CountedBytesAreWhatQuantisingHolds) {
  const auto format = [](const std::string& name, int64_t group = 128,
                         fp8::Recipe recipe = fp8::Recipe::kTensorwise) {
    layers::WeightFormatOptions options;
    options.group = group;
    options.fp8_recipe = fp8::recipe_name(recipe);
    options.activations = torch::kBFloat16;
    return layers::make_weight_format(name, options);
  };
  EXPECT_EQ(format("int8")->bytes_in(64, 128), 64 * 128 + 64 * 2);
  EXPECT_EQ(format("int4", 32)->bytes_in(64, 128), 64 * 64 + 4 * 64 * 2 * 2);
  EXPECT_EQ(format("fp8")->bytes_in(64, 128), 64 * 128 + 4);
  EXPECT_EQ(format("fp8", 0, fp8::Recipe::kRowwise)->bytes_in(64, 128), 64 * 128 + 64 * 4);
  EXPECT_EQ(format("fp8")->bytes_in(10, 128), std::nullopt);  // misaligned
  EXPECT_EQ(format("mxfp4")->bytes_in(64, 128), std::nullopt);
  EXPECT_EQ(format("bf16"), nullptr);  // a precision's, not a format of its own
  std::vector<std::shared_ptr<const layers::WeightFormat>> runnable;
  if (compat::kHasIntWeights) {
    runnable.push_back(format("int8"));
    runnable.push_back(format("int4", 32));
  }
  if (compat::kHasFp8 && compat::scaled_mm_runs_on_cpu()) {
    runnable.push_back(format("fp8"));
    runnable.push_back(format("fp8", 0, fp8::Recipe::kRowwise));
  }
  for (const auto& f : runnable) {
    const auto model = ModelRegistry::instance().get("test-tiny-llama").instantiate();
    model->cast_for_inference(torch::kBFloat16);
    const int64_t before = inference_weight_bytes(model->module());
    const int64_t counted = layers::counted_bytes_change(model->module(), *f);
    EXPECT_LT(counted, 0);
    layers::quantize_linear_layers(model->module(), *f);
    EXPECT_EQ(inference_weight_bytes(model->module()), before + counted) << f->name();
  }
}

}  // namespace
}  // namespace gpubench::integer_weights_tests
