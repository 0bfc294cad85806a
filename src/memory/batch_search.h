// `--batch-size max`: the largest per-device batch that trains, found as Lambda finds it by hand
// (docs/memory.md). The search starts from `fit`'s prediction, confirms it with a real probe,
// then steps up (or halves down) until it has a batch that trains next to one that does not,
// and bisects between them. Each probe is one short run in a process of its own
// (launcher/batch_probes.h), so one that runs out leaves nothing behind for the next.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "results/memory_info.h"

namespace gpubench {

// Runs one probe at `batch`: outcome "ok", "oom" or "failed".
using BatchProbeRunner = std::function<BatchProbe(int64_t batch)>;

// Assumes a batch that trains has every smaller one down to `smallest` (the model's least,
// ModelInfo::min_training_batch) train too. found_batch is 0 when `smallest` does not; the
// search stops at the first probe that failed for another reason than memory (its outcome is
// the last probe's).
BatchSearchInfo search_largest_batch(int64_t predicted, const BatchProbeRunner& probe,
                                     int64_t largest = int64_t{1} << 20, int64_t smallest = 1);

// The memory limit a probe holds to: the search's, and on a CPU device (`on_host`) no more than
// the host's `available` memory whatever limit was asked, so that no probe meets the kernel's
// OOM killer (a limit of 1 TiB let a tiny Llama's probe grow past 6 GB for minutes).
int64_t probe_memory_limit(int64_t search_limit, bool on_host, std::optional<int64_t> available);

}  // namespace gpubench
