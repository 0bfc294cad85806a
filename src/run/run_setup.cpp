#include "run/run_setup.h"

#include "features/parallelism/model_parallelism.h"

namespace gpubench {

Collectives* RankPlacement::replicas() const {
  if (model_parallelism && model_parallelism->splits_every_layer()) return slice_replicas;
  return collectives;
}

}  // namespace gpubench
