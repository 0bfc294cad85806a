#include "features/model_options.h"

#include "features/parallelism/tensor_parallel.h"
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
  options.placement.tensor_parallel = parallelism::one_rank_alone(benchmark.tensor_parallel);
  if (benchmark.expert_parallel > 1) {
    options.experts = ModelRegistry::instance().get(benchmark.model).capabilities.experts /
                      benchmark.expert_parallel;
  }
  return options;
}

}  // namespace gpubench
