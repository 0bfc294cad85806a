// A model as `gpubench infer` holds it (docs/inference.md), shared by its workloads and by `fit
// --task infer`'s probes: the weights themselves in fp16 or bf16 (no autocast, as inference
// engines run them), the linear layers' weights quantised once where the format asks (fp8 by the
// precision's recipe, or a weight-only integer format), eval mode.
#pragma once

#include <optional>

#include <torch/torch.h>

#include "features/precision/precision_policy.h"
#include "modeling/linear_compute.h"
#include "modeling/model_registry.h"
#include "settings/benchmark.h"

namespace gpubench {

// The dtype the weights are held in for the precision; none for fp32 and tf32 (as built).
std::optional<torch::ScalarType> inference_weight_dtype(Precision precision);

// How infer holds the linear layers' weights for the `weights` setting ("int8", "int4" with
// `group`, "fp8" with `fp8_recipe`, "mxfp4") at `precision`; none where they stay in the
// precision's dtype.
std::shared_ptr<const layers::WeightFormat> linear_weights_format(const std::string& weights,
                                                                  Precision precision,
                                                                  int64_t group,
                                                                  const std::string& fp8_recipe);

// Cast, quantised and in eval mode.
void prepare_for_inference(TrainableModel& model, const ResolvedBenchmark& benchmark,
                           const PrecisionPolicy& policy);

// The bytes of the model's parameters and buffers (quantised weights are buffers).
int64_t inference_weight_bytes(torch::nn::Module& module);

// A model counted from its configuration, as infer builds it before quantising: every weight in
// the compute dtype (8- and 4-bit formats hold less once quantised), and MXFP4 experts in their
// 4.25 bits (born so). What the host holds while it builds the model, and the device once it is
// placed; fit's probes are sized by it too. Training's plan, float32 weights, put gpt-oss-120b's
// two-block probe at 24 GiB, which holds 3.5 with its experts in MXFP4. 0 for a model that is
// not counted.
int64_t planned_weight_bytes(const ModelInfo& info, const ModelOptions& options,
                             const ResolvedBenchmark& b);

// The key/value cache's dtype: e4m3 for --kv-cache fp8, else the weights' (float32 for fp32).
torch::ScalarType kv_cache_dtype(const ResolvedBenchmark& benchmark);

}  // namespace gpubench
