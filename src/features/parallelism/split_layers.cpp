#include "features/parallelism/split_layers.h"

namespace gpubench::parallelism {

SplitLayers::SplitLayers(LayerCollectives* tensor_parallel, LayerCollectives* expert_parallel) {
  if (tensor_parallel) tensor_parallel_ = std::make_unique<TensorParallelLayers>(*tensor_parallel);
  if (expert_parallel) expert_parallel_ = std::make_unique<ExpertParallelLayers>(*expert_parallel);
}

}  // namespace gpubench::parallelism
