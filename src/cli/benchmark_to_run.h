// The benchmark a command line runs: its options resolved on this machine, or a benchmark file.
#pragma once

#include "benchmark_options.h"

namespace gpubench::cli {

// What runs: the benchmark file given (checked against this machine), or the options resolved
// here (launcher/launch.h, resolve_here).
ResolvedBenchmark benchmark_to_run(const BenchmarkOptions& options, const BenchmarkRequest& request,
                                   bool warn_on_cpu_fallback = true);

}  // namespace gpubench::cli
