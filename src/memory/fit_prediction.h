// `gpubench fit`'s model of a training step's peak memory per device (README, Memory): the
// weights, gradients and optimiser states counted from the tensors of the model as built, and
// the activations and the rest of the step's peak measured by running forward and backward at
// small shapes on the device present, then scaled to the asked batch and sequence length.
//
// A measured quantity X is fitted to X(b, s) = fixed + b (linear s + quadratic s^2): batch 1
// and 2 at one length give the fixed part and the per-item part, a second length gives the
// per-item part's linear and quadratic terms (attention's scores, where they are stored). A
// model too large to build here is probed with one and with two of its repeated blocks at the
// real width, and every coefficient extended linearly to its block count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/memory_info.h"
#include "spec/benchmark.h"

namespace gpubench {

// fixed + batch x (linear x seq + quadratic x seq^2); seq is 1 for models without one.
struct BatchSeqFit {
  double fixed = 0, linear = 0, quadratic = 0;
  double at(int64_t batch, int64_t seq) const;
  // From X(1, s), X(2, s) and X(1, s2) (s2 = 2 s; 0: one length only, no quadratic term).
  static BatchSeqFit from(double at_1_s, double at_2_s, int64_t s, double at_1_s2, int64_t s2);
  // a + t (b - a), coefficient by coefficient: the fit of a model with more blocks.
  static BatchSeqFit extended(const BatchSeqFit& a, const BatchSeqFit& b, double t);
};

// One forward and backward at a probe shape.
struct ProbeReading {
  int64_t blocks = 0;  // 0: the whole model
  int64_t batch = 0;
  int64_t seq = 0;               // 0: a model without a sequence length
  int64_t inputs = 0;            // the synthetic batch's bytes
  int64_t activations = 0;       // left by the forward pass
  int64_t peak_above_start = 0;  // gradients cleared first, as a run does
  // Again with the gradients kept from the run before: the activation-bound peak, where every
  // activation is alive and nothing of backward has been freed.
  int64_t peak_above_start_kept = 0;
  int64_t gradients = 0;
};

struct MemoryFit {
  ResolvedBenchmark benchmark;
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer_states = 0;
  int64_t optimizer_workspace = 0;  // the update's temporaries (foreach: a copy of the gradients)
  BatchSeqFit inputs, activations;
  // Backward's peak above its start with the gradients kept from the step before (every
  // activation alive, and backward's temporaries), and, with them cleared as a run does, the
  // smallest probe's peak less the gradients (what backward holds beside them at its end).
  BatchSeqFit activation_peak;
  int64_t gradient_peak_extra = 0;
  std::string method;  // how it was probed, in words
  std::vector<ProbeReading> readings;
  double probe_seconds = 0;

  // The breakdown at the peak for `batch` per device at the benchmark's sequence length.
  MemoryBreakdown breakdown_at(int64_t batch) const;
  int64_t peak_at(int64_t batch) const { return breakdown_at(batch).total(); }
  // The largest batch whose peak is at most `capacity` bytes; 0 when not even batch 1 fits.
  int64_t max_batch(int64_t capacity) const;
};

struct FitOptions {
  // Probe with one and two blocks even where the whole model could be built (tests).
  bool force_blocks = false;
  // On the CPU, the probes' sequence length is halved until the largest probe's forward and
  // backward is at most this many FLOPs (the fit must take seconds, not hours, there).
  double cpu_flop_budget = 2e11;
};

// Probes on benchmark.device (resolved: cpu or cuda). Throws UsageError for a benchmark it
// cannot fit (batch max, several ranks are fine: the fit is per device) and when even the
// probes do not fit the host.
MemoryFit fit_memory(const ResolvedBenchmark& benchmark, const FitOptions& options = {});

}  // namespace gpubench
