// `infer --tpot-target-ms` (docs/inference.md#a-time-per-output-token-target): of a batch sweep's
// generation results, the largest batch whose time per output token meets the target at the
// 99th percentile, as MLPerf's inference rules state their latency limits (Llama 2 70B: 40 ms
// interactive, 200 ms standard).
#pragma once

#include <string>
#include <vector>

#include "results/result.h"

namespace gpubench {

// The verdict line: which batch meets the target (its p99 and decode rate) and the next larger
// one that does not; or that none does. Results that failed or generated nothing are left out.
std::string tpot_target_verdict(const std::vector<Result>& results, double target_ms);

}  // namespace gpubench
