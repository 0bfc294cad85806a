// What features apply to a built model from outside it (tuning's LoRA adapters and activation
// checkpointing, features/tuning/): each registers a ModelTransform, and ModelInfo::instantiate
// applies every one to each model it builds, so that a model is the benchmark's wherever it is
// built (a run, fit's probes, measure_model, a test). A transform does nothing where the options
// do not ask for it; transforms are independent of each other, so their order does not matter.
// The models know none of them: they declare their layers' roles and blocks, which is what a
// transform reads.
#pragma once

namespace gpubench {

struct ModelOptions;
struct ModelStats;
class TrainableModel;
namespace models {
struct BlockProjections;  // modeling/fine_tuning_model.h
}

class ModelTransform {
 public:
  virtual ~ModelTransform() = default;
  virtual void apply(TrainableModel& model, const ModelOptions& options) const = 0;
  // `stats`, counted from a model's configuration without building it, changed as apply() would
  // change the built model's: a model whose repeated blocks hold `projections`.
  virtual void count(ModelStats& stats, const models::BlockProjections& projections,
                     const ModelOptions& options) const = 0;
};

// `static const ModelTransformRegistration kRegistration{&transform};` in the feature's file;
// `transform` lives as long as the program.
struct ModelTransformRegistration {
  explicit ModelTransformRegistration(const ModelTransform* transform);
};

void apply_model_transforms(TrainableModel& model, const ModelOptions& options);
void count_model_transforms(ModelStats& stats, const models::BlockProjections& projections,
                            const ModelOptions& options);

}  // namespace gpubench
