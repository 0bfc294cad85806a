#include "modeling/model_transforms.h"

#include <vector>

namespace gpubench {
namespace {

std::vector<const ModelTransform*>& registered_transforms() {
  static std::vector<const ModelTransform*> transforms;
  return transforms;
}

}  // namespace

ModelTransformRegistration::ModelTransformRegistration(const ModelTransform* transform) {
  registered_transforms().push_back(transform);
}

void apply_model_transforms(TrainableModel& model, const ModelOptions& options) {
  for (const ModelTransform* transform : registered_transforms()) transform->apply(model, options);
}

void count_model_transforms(ModelStats& stats, const models::BlockProjections& projections,
                            const ModelOptions& options) {
  for (const ModelTransform* transform : registered_transforms()) {
    transform->count(stats, projections, options);
  }
}

}  // namespace gpubench
