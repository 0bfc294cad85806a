// The decode ceiling of a text-generation result (docs/inference.md#the-decode-ceiling): decode
// at small batch reads every weight once a step and each sequence's key/value cache, so memory
// bandwidth over the bytes a decoded token reads bounds the tokens/s. The bandwidth is the
// matched datasheet's for a GPU (never guessed: an unmatched GPU gets no ceiling) and the
// measured copy's (system.cpu_memory_bandwidth_gbs) for the CPU; replicas each have their own.
#pragma once

#include "results/result.h"

namespace gpubench {

// Fills metrics.inference's ceiling fields from bytes_per_decoded_token, the decode rate, the
// datasheet block and the system block; clears them where there is no bandwidth.
void attach_decode_ceiling(Result& result);

}  // namespace gpubench
