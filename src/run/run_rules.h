// The run's own rules of resolve: the device and how many ranks and threads this machine takes,
// the trace file, a batch search's memory limit.
#pragma once

#include "features/resolve_rule.h"

namespace gpubench {

// kAuto becomes CUDA when present. Throws UsageError for CUDA without a device, or more ranks
// here than devices.
DeviceKind resolve_device(DeviceKind requested, int ranks, const MachineFacts& machine);

namespace run_rules {

// The device: resolve_device for the benchmark's ranks.
void resolve_device(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// Threads per rank where not given (CPU ranks on one machine share its cores), and no more than
// the machine can run.
void resolve_threads(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// The trace's folder must exist and take a new file: found now, not after the measured trials.
void check_profile_path(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// The search hands the limit to fit as a card's size: the user's value meets fit's rule here,
// named as the user gave it, not in the child.
void check_search_memory_limit(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

}  // namespace run_rules
}  // namespace gpubench
