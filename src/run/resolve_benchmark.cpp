#include "run/resolve_benchmark.h"

#include <algorithm>

#include "features/graph_mode/graph_mode.h"
#include "features/parallelism/model_parallelism.h"
#include "features/parallelism/parallelism_rules.h"
#include "features/precision/precision_rules.h"
#include "features/tuning/tuning_rules.h"
#include "features/weights/weight_rules.h"
#include "modeling/weight_formats.h"
#include "run/model_input_rules.h"
#include "run/run_rules.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

// In the order their inputs need: the ranks before the device, the device before what it can
// compute in, the weights' format before the precision it sets, the task before what serves it.
// Where a request breaks several rules, the first in this list is the one named.
constexpr ResolveStep kResolveSteps[] = {
    {"parallelism", "each model parallelism's group, model and mode, as registered",
     parallelism::resolve_model_parallelism},
    {"run", "the device, and the ranks this machine takes", run_rules::resolve_device},
    {"weights", "infer's weight format and the precision it sets", weights::resolve_format},
    {"precision", "the precision on the device", precision::check_supported},
    {"weights", "int4's kernel on the device", weights::check_int4_kernel},
    {"model", "the batch size", model_inputs::resolve_batch_size},
    {"precision", "channels-last where the device favours it", precision::resolve_channels_last},
    {"model", "token segments and their memory", model_inputs::resolve_segments},
    {"model", "objects per image", model_inputs::resolve_objects},
    {"model", "torchvision's operators", model_inputs::require_vision_ops},
    {"tuning", "the optimiser", tuning::resolve_optimizer},
    {"model", "the sequence length", model_inputs::resolve_sequence_length},
    {"tuning", "LoRA's and QLoRA's adapters", tuning::resolve_adapters},
    {"model", "the repeated blocks trained", model_inputs::check_blocks},
    {"tuning", "activation checkpointing", tuning::check_activation_checkpointing},
    {"model", "the task, and infer's prompt and generated tokens", model_inputs::resolve_task},
    {"precision", "FP8's recipe and key/value cache", precision::resolve_fp8},
    {"model", "a mixture of experts' top-k", model_inputs::resolve_experts_per_token},
    {"weights", "a weight format the model declares", weights::check_declared_format},
    {"model", "the warm-up steps the model needs", model_inputs::check_warmup_steps},
    {"run", "threads per rank", run_rules::resolve_threads},
    {"run", "the profile's trace file", run_rules::check_profile_path},
    {"run", "a batch search's memory limit", run_rules::check_search_memory_limit},
    {"parallelism", "sharded data parallelism", parallelism::resolve_shard},
    {"graph mode", "what a CUDA graph can capture", check_graph_mode},
};

}  // namespace

std::vector<ResolveStep> resolve_steps() {
  std::vector<ResolveStep> steps;
  for (const ResolveStep& step : kResolveSteps) {
    if (step.rule != parallelism::resolve_model_parallelism) {
      steps.push_back(step);
      continue;
    }
    for (const parallelism::ModelParallelism* kind : parallelism::model_parallelisms()) {
      steps.push_back({step.owner, kind->decides(), step.rule});
    }
  }
  return steps;
}

ResolvedBenchmark resolve(const BenchmarkRequest& request, const MachineFacts& machine) {
  ResolvedBenchmark out = with_fixed_defaults(request);
  const ModelInfo& info = ModelRegistry::instance().get(out.model);
  out.model = info.name;
  const ResolveInputs inputs{request, info, machine};
  for (const ResolveStep& step : kResolveSteps) step.rule(inputs, out);
  return out;
}

int fewest_warmup_steps(const ResolvedBenchmark& b) {
  const ModelInfo& info = ModelRegistry::instance().get(b.model);
  int fewest = 1;
  if (info.minimum_warmup_steps) fewest = info.minimum_warmup_steps(b.tgt_len, b.mem_len);
  if (b.mode == Mode::kGraph) fewest = std::max(fewest, graph_capture_warmup_steps(b.task));
  return std::max(1, fewest);
}

ResolvedBenchmark as_requested(const BenchmarkRequest& request) {
  ResolvedBenchmark out = with_fixed_defaults(request);
  const ModelInfo& info = ModelRegistry::instance().get(out.model);
  out.model = info.name;
  if (out.device == DeviceKind::kAuto) out.device = DeviceKind::kCuda;
  if (!request.batch_size || *request.batch_size == kSearchBatchSize) {
    out.batch_size = info.default_batch_size;
  }
  out.threads = std::max<int64_t>(1, out.threads);
  // A skipped int4 run reads as the bf16 run it would have been.
  if (!request.precision && layers::is_integer_format(out.weights)) {
    out.precision = Precision::kBf16;
  }
  return out;
}

}  // namespace gpubench
