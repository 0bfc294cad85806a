// `gpubench fit --task infer`'s probes (docs/memory.md, "Inference"): the model held as `infer`
// holds it (inference_model.h), its prompt's pass and a decode step run at small shapes on the
// device present, read into memory/inference_fit.h's model of a generation's peak.
#pragma once

#include "memory/inference_fit.h"
#include "run/fit_probes.h"
#include "settings/benchmark.h"

namespace gpubench {

// Probes on benchmark.device (resolved: cpu or cuda) for a model that generates text. Throws
// UsageError for one it cannot fit (a model that does not generate, --blocks) and when even the
// probes do not fit the host.
InferenceMemoryFit fit_inference_memory(const ResolvedBenchmark& benchmark,
                                        const FitOptions& options = {});

}  // namespace gpubench
