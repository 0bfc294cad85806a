// Parallelism applied to a model from outside it: a rank's model-parallel group made, by its
// parallelism's plug-in (model_parallelism.h), into what its model's layers are split over
// (modeling/layer_groups.h), and handed to the model in its placement.
#pragma once

#include <memory>

#include "features/parallelism/layer_collectives.h"
#include "features/parallelism/model_parallelism.h"
#include "modeling/layer_placement.h"

namespace gpubench::parallelism {

class SplitLayers {
 public:
  SplitLayers() = default;
  // Without `kind` or `group`, every layer whole; `group` outlives this, which outlives the models
  // it places.
  SplitLayers(const ModelParallelism* kind, LayerCollectives* group);

  const layers::LayerPlacement& placement() const { return placement_; }

 private:
  layers::LayerPlacement placement_;
  std::shared_ptr<void> layers_;  // what placement_ points into
};

}  // namespace gpubench::parallelism
