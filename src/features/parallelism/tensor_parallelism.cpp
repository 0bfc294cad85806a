// Tensor parallelism's plug-in (model_parallelism.h): its rule, its group, its layers
// (tensor_parallel.h), fit's one rank alone, its memory share and its result keys.
#include <algorithm>

#include "common/errors.h"
#include "features/parallelism/model_parallelism.h"
#include "features/parallelism/tensor_parallel.h"

namespace gpubench::parallelism {
namespace {

class TensorParallelism final : public ModelParallelism {
 public:
  const char* setting() const override { return "tensor_parallel"; }
  int ranks(const ResolvedBenchmark& benchmark) const override { return benchmark.tensor_parallel; }

  const char* decides() const override { return "tensor parallelism's group, model and mode"; }
  // A divisor of the world, a model that declares what its ranks split and sizes they divide,
  // eager mode, and one node's ranks.
  void resolve(const ResolveInputs& inputs, ResolvedBenchmark& out) const override {
    const ModelInfo& info = inputs.model;
    const MachineFacts& machine = inputs.machine;
    const int ranks = out.tensor_parallel;
    if (ranks == 1) return;
    const std::string given = "tensor_parallel " + std::to_string(ranks);
    if (out.gpus % ranks != 0) {
      throw UsageError(given + " does not divide gpus " + std::to_string(out.gpus) +
                       ": the ranks are tensor-parallel x data-parallel");
    }
    const auto& splits = info.capabilities.split_counts;
    if (splits.empty()) {
      throw UsageError(
          given + ": " + info.name + " does not shard; tensor parallelism applies to " +
          models_where([](const ModelCapabilities& can) { return !can.split_counts.empty(); }) +
          " (--gpus alone runs data parallel)");
    }
    if (const std::string why = why_not_tensor_split(ranks, splits, info.name); !why.empty()) {
      throw UsageError(why);
    }
    if (out.mode == Mode::kGraph) {
      throw UsageError(given +
                       " runs in eager mode: its all-reduces are not captured in a CUDA "
                       "graph (--mode eager)");
    }
    refuse_batch_search(given, out);
    if (machine.local_ranks > 0 && ranks > machine.local_ranks) {
      throw UsageError(given + " spans nodes: this node runs " +
                       std::to_string(machine.local_ranks) +
                       " ranks, and tensor parallelism across nodes would run over the network "
                       "fabric; keep it at most " +
                       std::to_string(machine.local_ranks));
    }
    // A group is `ranks` neighbouring ranks: each lies within a node only where they divide the
    // node's ranks (6 ranks on 2 nodes with tensor_parallel 2: ranks 2 and 3 on two nodes).
    if (machine.local_ranks > 0 && machine.local_ranks % ranks != 0) {
      throw UsageError(given + " spans nodes: this node runs " +
                       std::to_string(machine.local_ranks) + " ranks, which " +
                       std::to_string(ranks) +
                       " does not divide, so a group of neighbouring ranks would lie across two "
                       "nodes; give a divisor of " +
                       std::to_string(machine.local_ranks));
    }
  }

  // A launcher's world of one with a model that splits runs the split layers over a group of
  // one, as its process group of one runs DDP's all-reduces (the GPU check's one-GPU proof of the
  // NCCL path); a sharded run's group of one shards, and nothing more.
  bool makes_group_unasked(const ResolvedBenchmark& benchmark, int world_size) const override {
    if (benchmark.sharded()) return false;
    const ModelInfo& info = ModelRegistry::instance().get(benchmark.model);
    return world_size == 1 && !info.capabilities.split_counts.empty();
  }

  std::shared_ptr<void> place(LayerCollectives& group,
                              layers::LayerPlacement& placement) const override {
    auto split = std::make_shared<TensorParallelLayers>(group);
    placement.tensor_parallel = split.get();
    return split;
  }
  bool splits_every_layer() const override { return true; }

  void place_one_rank_alone(const ResolvedBenchmark& benchmark, const ModelInfo& /*info*/,
                            ModelOptions& options) const override {
    options.placement.tensor_parallel = one_rank_alone(benchmark.tensor_parallel);
  }
  std::string probed_slice(const ResolvedBenchmark& benchmark,
                           const ModelInfo& /*info*/) const override {
    return ", one tensor-parallel rank's slice of " + std::to_string(benchmark.tensor_parallel) +
           " (its collectives' buffers left out)";
  }
  // A rank holds its slice; the norms, whole on every rank, are about 0.01 % of a Llama's
  // weights and left out.
  void rank_share(const MemoryPlanInputs& inputs, MemoryPlan& plan) const override {
    plan.share_state(std::max(1, inputs.benchmark.tensor_parallel));
  }

  int64_t rank_bytes(const ResolvedBenchmark& benchmark, const ModelInfo& /*info*/,
                     const ModelOptions& options,
                     const std::function<int64_t(const ModelOptions&)>& whole) const override {
    return whole(options) / std::max(1, benchmark.tensor_parallel);
  }

  void record_wait(const GroupWait& wait, DistributedInfo& result) const override {
    result.tensor_parallel_exposed_ms = wait.exposed_ms;
    result.tensor_parallel_prefill_exposed_ms = wait.prefill_exposed_ms;
    result.tensor_parallel_collectives = wait.collectives;
  }
};

}  // namespace

const ModelParallelism& tensor_parallelism() {
  static const TensorParallelism plugin;
  return plugin;
}

}  // namespace gpubench::parallelism
