#include "features/tuning/tuning_transform.h"

#include <algorithm>

#include "features/tuning/activation_checkpoint.h"
#include "features/tuning/lora.h"
#include "modeling/model_transforms.h"

namespace gpubench::tuning {
namespace {

class TuningTransform : public ModelTransform {
 public:
  void apply(TrainableModel& model, const ModelOptions& options) const override {
    apply_tuning(model.module(), options);
  }
  void count(ModelStats& stats, const models::BlockProjections& projections,
             const ModelOptions& options) const override {
    stats = with_tuning(stats, projections, options);
  }
};

const TuningTransform kTuningTransform;
const ModelTransformRegistration kTuningRegistration{&kTuningTransform};

}  // namespace

void apply_tuning(torch::nn::Module& module, const ModelOptions& options) {
  if (uses_lora(options.tuning)) {
    apply_lora(module, options.lora.targets, options.lora.rank, options.lora.alpha);
  }
  if (options.activation_checkpointing) checkpoint_blocks(module);
}

ModelStats with_tuning(ModelStats stats, const models::BlockProjections& projections,
                       const ModelOptions& options) {
  const bool lora = uses_lora(options.tuning);
  int64_t adapters = 0, projection_weights = 0, largest = 0;
  for (const models::Projection& projection : projections.per_block) {
    const auto& targets = options.lora.targets;
    if (lora && std::find(targets.begin(), targets.end(), projection.role) != targets.end()) {
      adapters += options.lora.rank * (projection.in + projection.out);
    }
    projection_weights += projection.in * projection.out;
    largest = std::max(largest, projection.in * projection.out);
  }
  stats.params += projections.blocks * adapters;
  if (stats.active_params > 0) stats.active_params += projections.blocks * adapters;
  stats.trainable_params = lora ? projections.blocks * adapters : stats.params;
  if (options.tuning == Tuning::kQlora) {
    stats.nf4_params = projections.blocks * projection_weights;
    stats.largest_nf4_weight = largest;
  }
  stats.forward_flops += 2 * projections.tokens_per_sample * projections.blocks * adapters;
  stats.frozen_weight_flops = lora ? stats.weight_flops : 0;
  return stats;
}

}  // namespace gpubench::tuning
