#include "features/model_options.h"

#include "features/parallelism/model_parallelism.h"
#include "features/tuning/lora.h"

namespace gpubench {

ModelOptions model_options_for(const ResolvedBenchmark& benchmark) {
  ModelOptions options;
  static_cast<SequenceSettings&>(options) = benchmark;
  static_cast<DetectionSettings&>(options) = benchmark;
  static_cast<FineTuningSettings&>(options) = benchmark;
  options.experts_in_mxfp4 = benchmark.weights == "mxfp4";
  options.experts_per_token = benchmark.experts_per_token;
  if (!uses_lora(benchmark.tuning)) return options;
  const ModelInfo& info = ModelRegistry::instance().get(benchmark.model);
  options.lora.rank = benchmark.lora_rank;
  options.lora.alpha = benchmark.lora_alpha;
  options.lora.targets =
      tuning::parse_lora_targets(benchmark.lora_targets, info.capabilities.lora_roles, info.name);
  return options;
}

ModelOptions probed_model_options(const ResolvedBenchmark& benchmark) {
  ModelOptions options = model_options_for(benchmark);
  if (const auto* kind = parallelism::asked_model_parallelism(benchmark)) {
    kind->place_one_rank_alone(benchmark, ModelRegistry::instance().get(benchmark.model), options);
  }
  return options;
}

}  // namespace gpubench
