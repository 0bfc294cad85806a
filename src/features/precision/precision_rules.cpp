#include "features/precision/precision_rules.h"

#include "common/errors.h"
#include "features/precision/precision_policy.h"
#include "torch_support/compat.h"

namespace gpubench::precision {

void check_supported(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  PrecisionPolicy::unsupported_reason(out.precision, out.device, inputs.machine).raise_if_refused();
}

void resolve_channels_last(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  out.channels_last = inputs.request.channels_last.value_or(
      inputs.model.prefers_channels_last &&
      PrecisionPolicy::favours_channels_last(out.precision, out.device));
}

void resolve_fp8(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  if (out.precision != Precision::kFp8) {
    if (inputs.request.fp8_recipe) throw UsageError("fp8_recipe applies to precision fp8 only");
    out.fp8_recipe.clear();
  } else if (!info.capabilities.products_in_linear_layers) {
    throw UsageError("precision 'fp8' runs the linear layers' products in FP8, and " + info.name +
                     " declares no FP8-eligible layers (FP8 convolutions are not a PyTorch "
                     "path); use bf16");
  }
  if (out.kv_cache != "fp8") return;
  if (out.task != Task::kInfer || !info.capabilities.generates) {
    throw UsageError("kv_cache fp8 applies to gpubench infer of the models that generate text (" +
                     generating_models() + ")");
  }
  if (!compat::kHasFp8) {
    throw Unavailable(requirement::kLibtorchFp8,
                      "kv_cache fp8 needs LibTorch " + std::string(compat::kFp8MinimumLibtorch) +
                          " or later; this gpubench is built with LibTorch " +
                          compat::libtorch_version());
  }
}

}  // namespace gpubench::precision
