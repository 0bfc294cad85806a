// A benchmark's model built and placed as a run trains it, shared by the launcher and `fit`'s
// probes: LoRA's frozen base in the compute dtype, the move to the device, weights drawn there
// when deferred, channels-last where asked, training mode.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "features/precision/precision_policy.h"
#include "modeling/model_registry.h"
#include "settings/benchmark.h"

namespace gpubench {

// LoRA's frozen base is built in the compute dtype (bf16 or fp16), as the usual recipes load it,
// so an 8B model takes 16 GB of host memory on its way to the device, not 32; the adapters are
// made in float32 whatever the default, so their optimiser state is float32 too.
std::unique_ptr<TrainableModel> build_model(const ModelInfo& info, const ModelOptions& options,
                                            const ResolvedBenchmark& benchmark,
                                            const PrecisionPolicy& policy);

// To `device`; draws the weights there when options.defer_initialization; NHWC weights when
// `channels_last`; training mode.
void place_model(TrainableModel& model, torch::Device device, const ModelOptions& options,
                 bool channels_last);

}  // namespace gpubench
