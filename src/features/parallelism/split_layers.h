// Parallelism applied to a model from outside it: a rank's tensor- and expert-parallel groups
// made, from the run's collectives, into what its model's layers are split over
// (modeling/layer_groups.h), and handed to the model in its placement.
#pragma once

#include <memory>

#include "features/parallelism/expert_parallel.h"
#include "features/parallelism/layer_collectives.h"
#include "features/parallelism/tensor_parallel.h"
#include "modeling/layer_placement.h"

namespace gpubench::parallelism {

class SplitLayers {
 public:
  SplitLayers() = default;
  // Either may be null (no such group); both outlive this, which outlives the models it places.
  SplitLayers(LayerCollectives* tensor_parallel, LayerCollectives* expert_parallel);

  layers::LayerPlacement placement() const {
    return {tensor_parallel_.get(), expert_parallel_.get()};
  }

 private:
  std::unique_ptr<TensorParallelLayers> tensor_parallel_;
  std::unique_ptr<ExpertParallelLayers> expert_parallel_;
};

}  // namespace gpubench::parallelism
