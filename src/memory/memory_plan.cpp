#include "memory/memory_plan.h"

#include <algorithm>

#include <fstream>
#include <sstream>

#include "optim/optimizer_registry.h"

namespace gpubench {

MemoryPlan plan_memory(const ModelStats& stats, const ResolvedBenchmark& b, const ModelInfo& info,
                       const ModelOptions& options) {
  // fp8: bf16 everywhere but the linear layers' products (which keep FP8 copies of their inputs
  // for backward, a byte each: the bf16 estimate is the larger).
  const bool half = compute_element_bytes(b.precision) == 2;
  const bool half_frozen = uses_lora(b.tuning) && half;
  const int64_t frozen = stats.params - stats.trainable_params - stats.nf4_params;
  MemoryPlan plan;
  // NF4: half a byte a weight and a float32 absmax a block of 64 (features/weights/nf4_weights.h).
  plan.weights = 4 * stats.trainable_params + (half_frozen ? 2 : 4) * frozen +
                 stats.nf4_params / 2 + stats.nf4_params / 64 * 4;
  // fp8 LoRA: each frozen weight keeps its two FP8 operands, a byte a weight each
  // (fp8::FrozenWeightOperands; the norms' few weights, which keep none, are counted too).
  if (b.precision == Precision::kFp8 && uses_lora(b.tuning)) plan.weights += 2 * frozen;
  plan.gradients = 4 * stats.trainable_params;
  // AdamW: two moments; SGD: the momentum buffer.
  plan.optimizer_state = OptimizerRegistry::instance()
                             .get(optimizer_for(b.optimizer, info.optimizer))
                             .state_bytes_per_parameter *
                         stats.trainable_params;
  // Tensor parallelism: each rank holds its slice (the norms, whole on every rank, are about
  // 0.01 % of a Llama's weights and left out).
  // --shard: each rank holds its master shards, their gradients and states (the gathered units,
  // a block or two in the compute dtype, are left out).
  const int64_t ranks = b.sharded() ? std::max(1, b.gpus) : std::max(1, b.tensor_parallel);
  plan.weights /= ranks;
  plan.gradients /= ranks;
  plan.optimizer_state /= ranks;
  // A sharded rank builds the whole model before it keeps its shards.
  plan.host_build = b.sharded() ? plan.weights * ranks : plan.weights;
  if (info.activation_bytes)
    plan.activations = info.activation_bytes(options, b.batch_size, half ? 2 : 4);
  return plan;
}

std::string memory_shortfall(const MemoryPlan& plan, const ResolvedBenchmark& b,
                             int64_t host_available, int64_t device_memory) {
  const std::string recipe =
      b.model + " (" + to_string(b.tuning) + ", " + to_string(b.precision) + ")";
  if (plan.host_build > host_available) {
    return "out of memory before the run: " + recipe + " is built on the host, " +
           bytes_text(plan.host_build) + " of weights, and the host has " +
           bytes_text(host_available) + " available";
  }
  const int64_t device = b.device == DeviceKind::kCpu ? host_available : device_memory;
  if (plan.device_total() > device) {
    return "out of memory before the run: " + recipe + " needs " + bytes_text(plan.device_total()) +
           " for weights (" + bytes_text(plan.weights) + "), gradients (" +
           bytes_text(plan.gradients) + ") and optimiser state (" +
           bytes_text(plan.optimizer_state) + ") before any activation, and the " +
           (b.device == DeviceKind::kCpu
                ? std::string("host has ") + bytes_text(device) + " available"
                : "GPU has " + bytes_text(device));
  }
  if (b.device == DeviceKind::kCpu && plan.device_total() + plan.activations > host_available) {
    return "out of memory before the run: " + recipe + " needs " + bytes_text(plan.device_total()) +
           " for weights, gradients and optimiser state and about " + bytes_text(plan.activations) +
           " of activations at batch " + std::to_string(b.batch_size) +
           (b.seq_len > 0 ? ", seq " + std::to_string(b.seq_len) : "") +
           " (estimated), and the host has " + bytes_text(host_available) +
           " available (--activation-checkpointing or a smaller batch needs less)";
  }
  return "";
}

std::optional<int64_t> host_available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace gpubench
