// `gpubench fit`'s probes (docs/memory.md): forward and backward of the model at small shapes on
// the device present, read into memory/fit_prediction.h's model of a step's peak.
#pragma once

#include <optional>

#include "memory/fit_prediction.h"
#include "spec/benchmark.h"

namespace gpubench {

struct FitOptions {
  // Probe with one and two blocks even where the whole model could be built (tests).
  bool force_blocks = false;
  // Probes by blocks narrow a large vocabulary and extend it (fit_probe.cpp); false: the model's
  // own vocabulary in every probe (tests).
  bool narrow_vocab = true;
  // The probes of a counted model hold its weights, and the gradients they keep, in one buffer
  // per dtype (memory/shared_storage.h); false: each tensor its own (tests).
  bool shared_storage = true;
  // The host's available memory the probes are checked against; unset: MemAvailable (tests).
  std::optional<int64_t> host_available;
  // On the CPU, the probes' sequence length is halved until the largest probe's forward and
  // backward is at most this many FLOPs (the fit must take seconds, not hours, there).
  double cpu_flop_budget = 2e11;
  // ... but not below this length, the longest probe's (the others run at about a half and a
  // quarter of it: 2 and 1 at the shortest). With batch 1 and 2 probed, the fit tells what
  // grows per item from what grows once per step at every length, so short probes scale: for
  // Llama 3 8B, probes up to length 4 predict its peak at 256 within 0.2 % of probes up to
  // 128. CPU bf16 matmuls run on one core here, and short probes keep fit for Llama 3 8B under
  // a minute.
  int64_t shortest_probe = 3;
};

// Probes on benchmark.device (resolved: cpu or cuda). Throws UsageError for a benchmark it
// cannot fit (batch max, several ranks are fine: the fit is per device) and when even the
// probes do not fit the host.
MemoryFit fit_memory(const ResolvedBenchmark& benchmark, const FitOptions& options = {});

}  // namespace gpubench
