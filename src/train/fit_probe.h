// `gpubench fit`'s probes (docs/memory.md): forward and backward of the model at small shapes on
// the device present, read into memory/fit_prediction.h's model of a step's peak.
#pragma once

#include "memory/fit_prediction.h"
#include "run/fit_probes.h"
#include "settings/benchmark.h"

namespace gpubench {

// Probes on benchmark.device (resolved: cpu or cuda). Throws UsageError for a benchmark it
// cannot fit (batch max, several ranks are fine: the fit is per device) and when even the
// probes do not fit the host.
MemoryFit fit_memory(const ResolvedBenchmark& benchmark, const FitOptions& options = {});

}  // namespace gpubench
