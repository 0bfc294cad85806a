// `--batch-size max` run for real: the memory limit the search holds to, `fit`'s prediction and
// every probe each in a `gpubench` process of its own (memory/batch_search.h decides which).
#pragma once

#include <string>

#include "results/memory_info.h"
#include "settings/benchmark.h"

namespace gpubench {

struct BatchProbeOptions {
  std::string executable;  // gpubench-train
  std::string log_level = "warn";
  double timeout_seconds = 0;  // per probe; <= 0: none
};

// The largest batch per device that trains for `benchmark` (its batch_size is
// kSearchBatchSize): under its memory_limit, else the device's memory (the CPU: MemAvailable,
// enforced on the probes as their memory limit, so that none meets the kernel's OOM killer).
// The probes run one rank, the fewest warm-up steps the model and the mode allow, and 1 timed
// step. Throws Interrupted on SIGINT/SIGTERM.
BatchSearchInfo find_largest_batch(const ResolvedBenchmark& benchmark,
                                   const BatchProbeOptions& options);

}  // namespace gpubench
