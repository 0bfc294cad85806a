#include "features/parallelism/parallelism_rules.h"

#include "common/errors.h"

namespace gpubench::parallelism {

void resolve_tensor_parallel(const ResolveInputs& inputs, ResolvedBenchmark& out) {
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
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(given +
                     " with batch_size max: the batch search probes one rank's memory; "
                     "give a batch size");
  }
  if (machine.local_ranks > 0 && ranks > machine.local_ranks) {
    throw UsageError(given + " spans nodes: this node runs " + std::to_string(machine.local_ranks) +
                     " ranks, and tensor parallelism across nodes would run over the network "
                     "fabric; keep it at most " +
                     std::to_string(machine.local_ranks));
  }
  // A group is `ranks` neighbouring ranks: each lies within a node only where they divide the
  // node's ranks (6 ranks on 2 nodes with tensor_parallel 2: ranks 2 and 3 on two nodes).
  if (machine.local_ranks > 0 && machine.local_ranks % ranks != 0) {
    throw UsageError(given + " spans nodes: this node runs " + std::to_string(machine.local_ranks) +
                     " ranks, which " + std::to_string(ranks) +
                     " does not divide, so a group of neighbouring ranks would lie across two "
                     "nodes; give a divisor of " +
                     std::to_string(machine.local_ranks));
  }
}

void resolve_expert_parallel(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  const int ranks = out.expert_parallel;
  if (ranks == 1) return;
  const std::string given = "expert_parallel " + std::to_string(ranks);
  const int64_t experts = info.capabilities.experts;
  if (experts == 0) {
    throw UsageError(given + ": " + info.name + " has no experts; expert parallelism applies to " +
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
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(given +
                     " with batch_size max: the batch search probes one rank's memory; "
                     "give a batch size");
  }
  // Sharding reduces every gradient over all the data-parallel ranks, where expert parallelism
  // reduces an expert's over the ranks that hold it alone: the experts different ranks hold
  // would be averaged together, and the run would train another model.
  if (out.sharded()) {
    throw UsageError(given + " with shard " + out.shard +
                     ": sharding reduces every gradient over all ranks, which would average "
                     "experts that different ranks hold; use shard none with expert_parallel");
  }
}

void resolve_shard(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  if (!out.sharded()) return;
  const std::string given = "shard " + out.shard;
  if (out.task != Task::kTrain) throw UsageError(given + " is a training setting, not infer's");
  if (!info.capabilities.observed_blocks) {
    throw UsageError(
        given + ": " + info.name +
        " declares no repeated blocks to shard by (a unit per block); sharding "
        "applies to " +
        models_where([](const ModelCapabilities& can) { return can.observed_blocks; }));
  }
  if (out.tuning != Tuning::kFull) {
    throw UsageError(given + " with tuning " + to_string(out.tuning) +
                     ": sharding is for full fine-tunes (--tuning full); the adapters of LoRA "
                     "train under DDP's replicas");
  }
  if (out.tensor_parallel > 1) {
    throw UsageError(given + " with tensor_parallel " + std::to_string(out.tensor_parallel) +
                     ": sharding and tensor parallelism together are not supported; use one");
  }
  if (out.precision == Precision::kFp8) {
    throw UsageError(given +
                     " with precision fp8: the FP8 layers' scaling state is not sharded; use "
                     "bf16, fp16, tf32 or fp32");
  }
  if (out.mode == Mode::kGraph) {
    throw UsageError(given +
                     " runs in eager mode: its gathers and frees are not captured in a CUDA "
                     "graph (--mode eager)");
  }
  if (out.batch_size == kSearchBatchSize) {
    throw UsageError(given +
                     " with batch_size max: the batch search probes an unsharded step; give a "
                     "batch size (gpubench fit --shard predicts one)");
  }
}

}  // namespace gpubench::parallelism
