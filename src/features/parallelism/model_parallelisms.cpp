// The one registration of the model parallelisms (model_parallelism.h), and what every one of
// them does unless it says otherwise.
#include <stdexcept>

#include "common/errors.h"
#include "features/parallelism/model_parallelism.h"

namespace gpubench::parallelism {

const ModelParallelism& tensor_parallelism();  // tensor_parallelism.cpp
const ModelParallelism& expert_parallelism();  // expert_parallelism.cpp

const std::vector<const ModelParallelism*>& model_parallelisms() {
  static const std::vector<const ModelParallelism*> all = {&tensor_parallelism(),
                                                           &expert_parallelism()};
  return all;
}

const ModelParallelism& model_parallelism(const std::string& setting) {
  for (const ModelParallelism* kind : model_parallelisms()) {
    if (setting == kind->setting()) return *kind;
  }
  throw std::logic_error("no model parallelism is set by " + setting);
}

const ModelParallelism* asked_model_parallelism(const ResolvedBenchmark& benchmark) {
  for (const ModelParallelism* kind : model_parallelisms()) {
    if (kind->ranks(benchmark) > 1) return kind;
  }
  return nullptr;
}

int64_t rank_bytes(const ResolvedBenchmark& benchmark, const ModelInfo& info,
                   const ModelOptions& options,
                   const std::function<int64_t(const ModelOptions&)>& whole) {
  const ModelParallelism* kind = asked_model_parallelism(benchmark);
  return kind ? kind->rank_bytes(benchmark, info, options, whole) : whole(options);
}

void refuse_batch_search(const std::string& given, const ResolvedBenchmark& benchmark) {
  if (benchmark.batch_size == kSearchBatchSize) {
    throw UsageError(given +
                     " with batch_size max: the batch search probes one rank's memory; give a "
                     "batch size");
  }
}

void resolve_model_parallelism(const ResolveInputs& inputs, ResolvedBenchmark& benchmark) {
  for (const ModelParallelism* kind : model_parallelisms()) kind->resolve(inputs, benchmark);
}

bool ModelParallelism::makes_group_unasked(const ResolvedBenchmark& /*benchmark*/,
                                           int /*world_size*/) const {
  return false;
}

std::unique_ptr<GradientSync> ModelParallelism::replica_sync(
    const ResolvedBenchmark& /*benchmark*/, Collectives& /*world*/, Collectives& /*slice_replicas*/,
    torch::nn::Module& /*module*/, const std::vector<torch::Tensor>& /*trainable*/,
    int64_t /*bucket_bytes*/) const {
  return nullptr;
}

void ModelParallelism::rank_share(const MemoryPlanInputs& /*inputs*/, MemoryPlan& /*plan*/) const {}

int64_t ModelParallelism::rank_bytes(
    const ResolvedBenchmark& /*benchmark*/, const ModelInfo& /*info*/, const ModelOptions& options,
    const std::function<int64_t(const ModelOptions&)>& whole) const {
  return whole(options);
}

}  // namespace gpubench::parallelism
