// Expert parallelism's plug-in (model_parallelism.h): its rule, its layers (expert_parallel.h),
// its replicas' sync (expert_parallel_sync.h), fit's one rank alone and its result keys.
#include <optional>

#include "common/errors.h"
#include "features/memory_terms.h"
#include "features/parallelism/expert_parallel.h"
#include "features/parallelism/expert_parallel_sync.h"
#include "features/parallelism/model_parallelism.h"

namespace gpubench::parallelism {
namespace {

class ExpertParallelism final : public ModelParallelism {
 public:
  const char* setting() const override { return "expert_parallel"; }
  int ranks(const ResolvedBenchmark& benchmark) const override { return benchmark.expert_parallel; }

  const char* decides() const override { return "expert parallelism's group and model"; }
  // A mixture of experts, a divisor of its experts and of the world, and no other model
  // parallelism beside it.
  void resolve(const ResolveInputs& inputs, ResolvedBenchmark& out) const override {
    const ModelInfo& info = inputs.model;
    const int ranks = out.expert_parallel;
    if (ranks == 1) return;
    const std::string given = "expert_parallel " + std::to_string(ranks);
    const int64_t experts = info.capabilities.experts;
    if (experts == 0) {
      throw UsageError(given + ": " + info.name +
                       " has no experts; expert parallelism applies to " +
                       models_where([](const ModelCapabilities& can) { return can.experts > 0; }));
    }
    if (out.gpus % ranks != 0) {
      throw UsageError(given + " does not divide gpus " + std::to_string(out.gpus) +
                       ": the ranks are expert-parallel x expert replicas");
    }
    if (const std::string why = why_not_expert_split(ranks, experts, info.name); !why.empty()) {
      throw UsageError(why);
    }
    if (out.tensor_parallel > 1) {
      throw UsageError(given + " with tensor_parallel " + std::to_string(out.tensor_parallel) +
                       ": expert and tensor parallelism together are not supported; use one");
    }
    refuse_batch_search(given, out);
    // Sharding reduces every gradient over all the data-parallel ranks, where expert parallelism
    // reduces an expert's over the ranks that hold it alone: the experts different ranks hold
    // would be averaged together, and the run would train another model.
    if (out.sharded()) {
      throw UsageError(given + " with shard " + out.shard +
                       ": sharding reduces every gradient over all ranks, which would average "
                       "experts that different ranks hold; use shard none with expert_parallel");
    }
  }

  std::shared_ptr<void> place(LayerCollectives& group,
                              layers::LayerPlacement& placement) const override {
    auto split = std::make_shared<ExpertParallelLayers>(group);
    placement.expert_parallel = split.get();
    return split;
  }
  bool splits_every_layer() const override { return false; }
  std::unique_ptr<GradientSync> replica_sync(const ResolvedBenchmark& benchmark, Collectives& world,
                                             Collectives& slice_replicas, torch::nn::Module& module,
                                             const std::vector<torch::Tensor>& trainable,
                                             int64_t bucket_bytes) const override {
    return std::make_unique<ExpertParallelSync>(world, slice_replicas, benchmark.expert_parallel,
                                                module, trainable, bucket_bytes);
  }

  void place_one_rank_alone(const ResolvedBenchmark& benchmark, const ModelInfo& info,
                            ModelOptions& options) const override {
    options.experts = info.capabilities.experts / benchmark.expert_parallel;
  }
  std::string probed_slice(const ResolvedBenchmark& benchmark,
                           const ModelInfo& info) const override {
    const int64_t experts = info.capabilities.experts;
    return ", one expert-parallel rank's " + std::to_string(experts / benchmark.expert_parallel) +
           " of " + std::to_string(experts) +
           " experts a layer, routed as many tokens as its own (the exchanges' buffers left out)";
  }

  // A rank builds and holds its share of the experts alone (fit's lone rank's model): the plan's
  // weights, gradients and optimiser state are that model's, as the plan counts a model of its
  // own; the rest of the plan is the same. (A model without a count is not planned before its
  // run.)
  void rank_share(const MemoryPlanInputs& inputs, MemoryPlan& plan) const override {
    const std::optional<ModelOptions> held =
        rank_model(inputs.benchmark, inputs.model, inputs.options);
    if (!inputs.model.count || !held) return;
    ResolvedBenchmark alone = inputs.benchmark;
    alone.expert_parallel = 1;
    const MemoryPlan rank = plan_memory(inputs.model.count(*held), alone, inputs.model, *held);
    plan.weights = rank.weights;
    plan.gradients = rank.gradients;
    plan.optimizer_state = rank.optimizer_state;
  }

  int64_t rank_bytes(const ResolvedBenchmark& benchmark, const ModelInfo& info,
                     const ModelOptions& options,
                     const std::function<int64_t(const ModelOptions&)>& whole) const override {
    return whole(rank_model(benchmark, info, options).value_or(options));
  }

  void record_wait(const GroupWait& wait, DistributedInfo& result) const override {
    result.expert_parallel_exposed_ms = wait.exposed_ms;
    result.expert_parallel_prefill_exposed_ms = wait.prefill_exposed_ms;
    result.expert_parallel_collectives = wait.collectives;
  }

 private:
  // The options of the model a rank holds, where `options` leave its experts to the model (the
  // run's); none where they name their experts already (fit's probe models, some with twice a
  // rank's experts), which are counted as they are.
  std::optional<ModelOptions> rank_model(const ResolvedBenchmark& benchmark, const ModelInfo& info,
                                         const ModelOptions& options) const {
    if (options.experts > 0) return std::nullopt;
    ModelOptions held = options;
    place_one_rank_alone(benchmark, info, held);
    return held;
  }
};

}  // namespace

const ModelParallelism& expert_parallelism() {
  static const ExpertParallelism plugin;
  return plugin;
}

}  // namespace gpubench::parallelism
