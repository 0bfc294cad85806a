#include "features/parallelism/split_layers.h"

namespace gpubench::parallelism {

SplitLayers::SplitLayers(const ModelParallelism* kind, LayerCollectives* group) {
  if (kind && group) layers_ = kind->place(*group, placement_);
}

}  // namespace gpubench::parallelism
