#include "features/memory_plan.h"

namespace gpubench {

void model_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan) {
  const ResolvedBenchmark& b = inputs.benchmark;
  plan.weights = 4 * inputs.stats.params;
  plan.gradients = 4 * inputs.stats.trainable_params;
  // fp8: bf16 everywhere but the linear layers' products (which keep FP8 copies of their inputs
  // for backward, a byte each: the bf16 estimate is the larger).
  const bool half = compute_element_bytes(b.precision) == 2;
  if (inputs.model.activation_bytes) {
    plan.activations = inputs.model.activation_bytes(inputs.options, b.batch_size, half ? 2 : 4);
  }
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

}  // namespace gpubench
