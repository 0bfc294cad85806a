#include "infer/inference_model.h"

#include "memory/training_memory.h"
#include "modeling/linear_compute.h"
#include "modeling/mxfp4_weights.h"
#include "modeling/shared_input_products.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

// The linear layers' weights quantised once (fp8 by the precision's recipe, or an integer
// format); none where they stay in the precision's dtype.
std::shared_ptr<const layers::WeightFormat> quantized_weights(const ResolvedBenchmark& spec,
                                                              const PrecisionPolicy& policy) {
  auto named =
      linear_weights_format(spec.weights, spec.precision, spec.weight_group, spec.fp8_recipe);
  if (named && named->name() != "fp8") return named;
  const auto recipe = policy.fp8_recipe();
  if (!recipe) return nullptr;
  layers::WeightFormatOptions options;
  options.fp8_recipe = fp8::recipe_name(*recipe);
  return layers::make_weight_format("fp8", options);
}

}  // namespace

std::shared_ptr<const layers::WeightFormat> linear_weights_format(const std::string& weights,
                                                                  Precision precision,
                                                                  int64_t group,
                                                                  const std::string& fp8_recipe) {
  layers::WeightFormatOptions options;
  options.group = group;
  options.activations = inference_weight_dtype(precision).value_or(torch::kBFloat16);
  if (weights == "fp8") {
    options.fp8_recipe = fp8_recipe.empty() ? "tensorwise" : fp8_recipe;
  }
  return layers::make_weight_format(weights, options);
}

std::optional<torch::ScalarType> inference_weight_dtype(Precision precision) {
  if (precision == Precision::kFp16) return torch::kHalf;
  if (precision == Precision::kBf16 || precision == Precision::kFp8) return torch::kBFloat16;
  return std::nullopt;
}

void prepare_for_inference(TrainableModel& model, const ResolvedBenchmark& benchmark,
                           const PrecisionPolicy& policy) {
  if (const auto dtype = inference_weight_dtype(benchmark.precision)) {
    model.cast_for_inference(*dtype);
  }
  // Projections that read one input (q, k, v; gate, up) as one product, held as one where the
  // format quantises rows apart.
  layers::fuse_shared_input_products(model.module());
  if (const auto format = quantized_weights(benchmark, policy)) {
    layers::quantize_linear_layers(model.module(), *format);
  }
  model.module().eval();
}

int64_t inference_weight_bytes(torch::nn::Module& module) {
  std::vector<torch::Tensor> tensors = module.parameters();
  for (const torch::Tensor& buffer : module.buffers()) tensors.push_back(buffer);
  return storage_bytes(tensors);
}

torch::ScalarType kv_cache_dtype(const ResolvedBenchmark& benchmark) {
  return benchmark.kv_cache == "fp8"
             ? compat::float8_e4m3()
             : inference_weight_dtype(benchmark.precision).value_or(torch::kFloat);
}

int64_t planned_weight_bytes(const ModelInfo& info, const ModelOptions& options,
                             const ResolvedBenchmark& b) {
  if (!info.count) return 0;
  const ModelStats stats = info.count(options);
  const int64_t in_mxfp4 = b.weights == "mxfp4" ? stats.expert_weight_params : 0;
  // A byte of codes for two weights, a scale byte for each block.
  return (stats.params - in_mxfp4) * compute_element_bytes(b.precision) + in_mxfp4 / 2 +
         in_mxfp4 / mxfp4::kBlock;
}

}  // namespace gpubench
