// From what the user asked for to what runs: every default decided by its owner (the table's
// fixed defaults, the model's registration, the features applied to it, this machine), as a loop
// over their rules (features/resolve_rule.h).
#pragma once

#include <vector>

#include "features/resolve_rule.h"
#include "modeling/model_registry.h"
#include "run/run_rules.h"
#include "settings/benchmark.h"
#include "system/machine.h"

namespace gpubench {

// Throws UsageError for an unknown model, a precision the device cannot run, settings the
// model does not take, too few warm-up steps for the model, or devices this machine lacks.
ResolvedBenchmark resolve(const BenchmarkRequest& request, const MachineFacts& machine);

// resolve's rules, in the order it runs them, each model parallelism's apart (the generated
// reference lists them).
std::vector<ResolveStep> resolve_steps();

// A request that could not resolve here (common/errors.h's Unavailable), described for a result
// that records it: the table's defaults, the model's name and batch, the device as asked; none
// of this machine's decisions.
ResolvedBenchmark as_requested(const BenchmarkRequest& request);

// The fewest warm-up steps `benchmark` runs with: the model's steady state and, in graph mode,
// what the capture needs; at least 1 (what batch probes run).
int fewest_warmup_steps(const ResolvedBenchmark& benchmark);

}  // namespace gpubench
