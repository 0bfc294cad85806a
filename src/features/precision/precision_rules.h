// Precision's rules of resolve (docs/fp8.md): what the device can compute in, the layout it
// favours, FP8's recipe and FP8 key/value cache.
#pragma once

#include "features/resolve_rule.h"

namespace gpubench::precision {

// The precision on the resolved device (PrecisionPolicy::unsupported_reason).
void check_supported(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// channels_last where not given: a model that prefers it, on a device whose reduced precision
// runs on tensor cores.
void resolve_channels_last(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// fp8: the recipe where the precision is fp8, and none elsewhere; the FP8 key/value cache for
// the generation it serves.
void resolve_fp8(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

}  // namespace gpubench::precision
