// Parallelism's memory: one rank's share of the memory plan (features/memory_terms.h), and what one
// rank of a sharded run (--shard, features/parallelism/sharded_data_parallel.h) holds, from what an
// unsharded step holds (docs/memory.md): `gpubench fit --shard` probes the unsharded step and
// divides and adds by these rules; the run's own breakdown is counted from its tensors.
#pragma once

#include <cstdint>

#include "features/memory_plan.h"
#include "memory/fit_prediction.h"
#include "modeling/model_registry.h"
#include "settings/benchmark.h"

namespace gpubench {
namespace parallelism {

// The plan's weights, gradients and optimiser state, one rank's: under a model parallelism, its
// plug-in's share (ModelParallelism::rank_share); a sharded rank its master shards, their
// gradients and states (the gathered units, a block or two in the compute dtype, are left out).
// The host build: the weights as a rank builds them before they move, the whole model for a
// sharded rank, which keeps its shards after.
void rank_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan);

}  // namespace parallelism

// The parameters of the sharding units, counted by rule from the configuration.
struct ShardUnitParams {
  int64_t total = 0;
  int64_t root = 0;       // the embeddings, final norm and head
  int64_t block = 0;      // one repeated block
  int64_t embedding = 0;  // the token embedding (vocabulary x hidden)
};
ShardUnitParams count_shard_units(const ModelInfo& info, const ModelOptions& options);

// `fit` (an unsharded step's, on one device) as one rank's of b.gpus sharded ranks:
//   the weights: the float32 master shards (1/N), and what is gathered in the compute dtype: every
//   unit (grads), or the root and two blocks, the one running and the one prefetched (full);
//   gradients, optimiser states and the update's temporaries: 1/N;
//   the peak: the master shards' gradients arrive block by block as the activations go, so it is
//   early in backward (every activation, no master gradient; the fit counts the last block's
//   activations as alive still: high by them) or at its end (every master gradient, no
//   activation), whichever is larger, each with the unsharded gradients in hand: the root's, one
//   block's and its float32 reduce-scatter buffer;
//   under bf16/fp16, where autocast keeps compute-dtype copies of the weights for backward, the
//   probe's copies (the gathered weights are in the compute dtype already) leave the
//   activations: every weight but the token embedding's (a tied head's copy stays counted: the
//   fit errs high by it). With activation checkpointing nothing keeps them.
// `autocast_keeps_copies`: whether autocast keeps compute-dtype copies of float32 weights for
// backward on this build and device (measured by fit: one linear layer's forward).
void shard_memory_fit(MemoryFit& fit, const ShardUnitParams& units, const ResolvedBenchmark& b,
                      bool autocast_keeps_copies);

}  // namespace gpubench
