#include "features/tuning/tuning_rules.h"

#include "common/errors.h"
#include "features/tuning/lora.h"
#include "optim/optimizer_registry.h"

namespace gpubench::tuning {

void resolve_optimizer(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  if (!request.optimizer) return;
  OptimizerRegistry::instance().get(*request.optimizer);  // an unknown name is a usage error
  if (out.task == Task::kInfer) throw UsageError("optimizer is a training setting, not infer's");
  if (*request.optimizer == inputs.model.optimizer) out.optimizer.clear();  // the model's own
}

void resolve_adapters(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  const ModelInfo& info = inputs.model;
  const ModelCapabilities& can = info.capabilities;
  if (uses_lora(out.tuning) && can.lora_roles.empty()) {
    throw UsageError(
        "tuning '" + to_string(out.tuning) + "' applies to the fine-tuning models (" +
        models_where([](const ModelCapabilities& m) { return !m.lora_roles.empty(); }) + "); '" +
        info.name + "' trains in full only");
  }
  if (out.tuning == Tuning::kQlora && out.precision == Precision::kFp8) {
    throw UsageError(
        "tuning 'qlora' holds the frozen weights in NF4 and computes in bf16 or fp16; precision "
        "fp8 quantises the same products (use precision bf16)");
  }
  if (out.tuning == Tuning::kFull) {
    for (const auto& [given, key] : {std::pair{request.lora_rank.has_value(), "lora_rank"},
                                     std::pair{request.lora_alpha.has_value(), "lora_alpha"},
                                     std::pair{request.lora_targets.has_value(), "lora_targets"}}) {
      if (given) throw UsageError(std::string(key) + " applies to tuning 'lora' and 'qlora' only");
    }
    out.lora_rank = 0;
    out.lora_alpha = 0;
    out.lora_targets.clear();
  } else {
    const auto targets = parse_lora_targets(out.lora_targets, can.lora_roles, info.name);
    out.lora_targets = targets.size() == can.lora_roles.size() ? "all-linear" : join(targets, ",");
    for (const std::string& target : targets) {
      const auto limit = can.lora_rank_limits.find(target);
      if (limit != can.lora_rank_limits.end() && out.lora_rank > limit->second) {
        throw UsageError("lora_rank " + std::to_string(out.lora_rank) + " is more than " +
                         std::to_string(limit->second) + ", the smaller side of " + info.name +
                         "'s '" + target + "' projection: at most " +
                         std::to_string(limit->second) + " with these targets");
      }
    }
  }
}

void check_activation_checkpointing(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  const ModelCapabilities& can = info.capabilities;
  if (out.activation_checkpointing && !can.activation_checkpointing) {
    throw UsageError(
        "activation_checkpointing applies to the transformer models (" +
        models_where([](const ModelCapabilities& m) { return m.activation_checkpointing; }) +
        "), not to '" + info.name + "'");
  }
}

}  // namespace gpubench::tuning
