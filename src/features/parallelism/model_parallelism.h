// A model parallelism: one that splits a model's layers over a group of neighbouring ranks and
// communicates inside the model's passes (docs/parallelism.md): tensor parallelism splits every
// projection, expert parallelism a mixture's experts. Each is a plug-in in one file of this
// folder (tensor_parallelism.cpp, expert_parallelism.cpp), registered once
// (model_parallelisms.cpp). What the rest of the run asks of a model parallelism, it asks the
// plug-in: its rule, whether it makes a group, the layers it places over it, how its replicas
// agree on their gradients, fit's one rank alone and its slice, its memory share, and the keys its
// wait goes under. A run has at most one: the rules refuse two together.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "distributed/collectives.h"
#include "distributed/gradient_sync.h"
#include "features/memory_plan.h"
#include "features/parallelism/layer_collectives.h"
#include "features/resolve_rule.h"
#include "modeling/layer_placement.h"
#include "modeling/model_registry.h"
#include "results/result.h"
#include "settings/benchmark.h"

namespace gpubench::parallelism {

// The time the device waited on a model-parallel group's collectives, as a workload measured it
// (run/model_parallel_wait.h): per step (per decode step of a generation), on the slowest rank.
struct GroupWait {
  double exposed_ms = 0;
  double prefill_exposed_ms = 0;  // a generation's prompt passes'
  int64_t collectives = 0;        // per step
};

class ModelParallelism {
 public:
  virtual ~ModelParallelism() = default;

  // Its setting's key ("tensor_parallel"), which names it in the result and the messages.
  virtual const char* setting() const = 0;
  // The ranks of its group in `benchmark`; 1: not asked.
  virtual int ranks(const ResolvedBenchmark& benchmark) const = 0;
  // Its rule of resolve: what it refuses of the request as resolved so far (a rule, as
  // features/resolve_rule.h's), and what it decides, for the generated reference.
  virtual void resolve(const ResolveInputs& inputs, ResolvedBenchmark& benchmark) const = 0;
  virtual const char* decides() const = 0;

  // Whether a rank in a world of `world_size` makes its groups (split_world) where no model
  // parallelism is asked; where one is, its groups are made. By default, not.
  virtual bool makes_group_unasked(const ResolvedBenchmark& benchmark, int world_size) const;
  // Its layers over `group` (which outlives them), set in `placement`; the returned handle holds
  // them and outlives the models placed over them.
  virtual std::shared_ptr<void> place(LayerCollectives& group,
                                      layers::LayerPlacement& placement) const = 0;
  // Whether its group splits every layer, so that its groups' replicas hold the same slice and
  // average as DDP's replicas do; else it splits a part, the rest replicated on every rank.
  virtual bool splits_every_layer() const = 0;
  // How a training run's replicas agree on their gradients where it splits a part: over `world`,
  // with the part's over `slice_replicas` (the ranks holding this rank's part); null where DDP's
  // all-reduce over the replicas serves.
  virtual std::unique_ptr<GradientSync> replica_sync(const ResolvedBenchmark& benchmark,
                                                     Collectives& world,
                                                     Collectives& slice_replicas,
                                                     torch::nn::Module& module,
                                                     const std::vector<torch::Tensor>& trainable,
                                                     int64_t bucket_bytes) const;

  // fit (docs/memory.md): `options` made one rank's model, probed alone, its collectives moving
  // nothing; and the slice those probes held, as the fit's method says it (", one ...").
  virtual void place_one_rank_alone(const ResolvedBenchmark& benchmark, const ModelInfo& info,
                                    ModelOptions& options) const = 0;
  virtual std::string probed_slice(const ResolvedBenchmark& benchmark,
                                   const ModelInfo& info) const = 0;
  // One rank's share of the memory plan's weights, gradients and optimiser state (its term in
  // parallelism's, features/memory_terms.h); by default all of them.
  virtual void rank_share(const MemoryPlanInputs& inputs, MemoryPlan& plan) const;
  // One rank's bytes of what `whole` counts of a model built with `options` (a model's counts
  // leave its placement out): infer's planned weights. By default all of them.
  virtual int64_t rank_bytes(const ResolvedBenchmark& benchmark, const ModelInfo& info,
                             const ModelOptions& options,
                             const std::function<int64_t(const ModelOptions&)>& whole) const;

  // `wait` into the result's fields of this parallelism.
  virtual void record_wait(const GroupWait& wait, DistributedInfo& result) const = 0;
};

// Every model parallelism, in the order their rules run (tensor before expert: expert
// parallelism's rule names tensor parallelism's setting beside it).
const std::vector<const ModelParallelism*>& model_parallelisms();
// The one whose setting is `setting`; std::logic_error for none.
const ModelParallelism& model_parallelism(const std::string& setting);
// The one `benchmark` asks for (its ranks above 1); null for none.
const ModelParallelism* asked_model_parallelism(const ResolvedBenchmark& benchmark);

// One rank's bytes of what `whole` counts, as `benchmark`'s model parallelism holds them
// (ModelParallelism::rank_bytes); all of them without one.
int64_t rank_bytes(const ResolvedBenchmark& benchmark, const ModelInfo& info,
                   const ModelOptions& options,
                   const std::function<int64_t(const ModelOptions&)>& whole);

// A rule's refusal of `--batch-size max` beside a model parallelism (`given`: its setting and
// value): the batch search probes one rank's memory alone.
void refuse_batch_search(const std::string& given, const ResolvedBenchmark& benchmark);

// Every model parallelism's rule, in order (resolve's list runs it once).
void resolve_model_parallelism(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

}  // namespace gpubench::parallelism
