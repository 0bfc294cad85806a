#include "features/parallelism/parallelism_rules.h"

#include "common/errors.h"

namespace gpubench::parallelism {

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
