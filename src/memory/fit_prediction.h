// `gpubench fit`'s model of a training step's peak memory per device (docs/memory.md): the
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
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results/memory_info.h"

namespace gpubench {

// fixed + batch x (linear x seq + quadratic x seq^2); seq is 1 for models without one.
struct BatchSeqFit {
  // fixed(s) + batch (item + linear s + quadratic s^2), fixed(s) = fixed + fixed_linear s +
  // fixed_quadratic s^2: what a step holds once (position tables, a causal mask) may grow with
  // the length too. A training step holds nothing per item that is independent of the length
  // (item 0); a generation does: the last position's logits.
  double fixed = 0, fixed_linear = 0, fixed_quadratic = 0, linear = 0, quadratic = 0, item = 0;
  double at(int64_t batch, int64_t seq) const;

  struct Point {
    int64_t batch, seq;
    double value;
  };
  // From X at batches 1 and 2 (seq 0: a model without a length), or at batches 1 and 2 at
  // two lengths, and at batch 1 at a third. A term that would shrink as the length grows is
  // left out (the steeper line instead). `for_peak`: for the largest of several moments, whose
  // growth at small shapes is hidden by moments of fixed size, which a curve would extrapolate
  // wildly: per item the steeper line through the origin, fixed its value at the longest.
  static BatchSeqFit from(const std::vector<Point>& points, bool for_peak = false);
  // From X at two batches at each of three lengths: per item and once, each the line through its
  // two longest values (item, linear; fixed, fixed_linear), or where that falls, its largest
  // value: a longer length is never predicted below a shorter one. No square: what a generation
  // holds beside its attention's scores grows in proportion to the length, and probes a few tokens
  // long bend with the allocator's and the kernels' block sizes, which a parabola would extend as
  // a square (+71 % at prompt 48 from probes at 4, 8 and 16 on an Intel Xeon with AMX). A model
  // whose attention holds a square declares it (ModelInfo::prefill_score_bytes).
  static BatchSeqFit from_three_lengths(const std::vector<Point>& points);
  // a + t (b - a) + u (c - a), coefficient by coefficient: the fit of a model with more blocks
  // (b: one block more than a) and a larger vocabulary (c: a's blocks, a wider vocabulary).
  // `for_peak`: c's coefficients count only where they exceed a's.
  static BatchSeqFit extended(const BatchSeqFit& a, const BatchSeqFit& b, double t,
                              const BatchSeqFit& c, double u, bool for_peak = false);
  // Every coefficient widened_figure'd from the fits of the model narrowed in width by k and by
  // k / 2.
  static BatchSeqFit widened(const BatchSeqFit& narrow, const BatchSeqFit& twice, int64_t k,
                             bool for_peak = false);
  // Every coefficient on the line (widened_figure) from the fits at n and 2n to k n.
  static BatchSeqFit on_line(const BatchSeqFit& at_n, const BatchSeqFit& at_twice, int64_t k,
                             bool for_peak = false);
};

// base + t (blocks - base) + u (vocab - base): a figure of the probes by blocks (base: one block,
// blocks: two, vocab: one block at a wider vocabulary) extended to the whole model. A peak is the
// largest of several moments: one that a wider vocabulary leaves where it was (a block's) shows
// as a smaller extra above the larger activations, which must not be extrapolated down to a
// negative one, so for a peak the vocabulary's part counts only where it grows.
double extended_figure(double base, double blocks, double t, double vocab, double u,
                       bool for_peak = false);

// A figure of the probes narrowed in width (ModelOptions::width_divisor) at the model's width.
// What the activations, the cache and backward's moments hold grows with the width as a line
// (each is hidden-, head- or MLP-wide, and those keep their ratios; the head width, the rotary
// tables and the logits do not change): the line through `narrow` (at 1/k of the width) and
// `twice` (at 2/k), where for a peak the width's part counts only where it grows.
double widened_figure(double narrow, double twice, int64_t k, bool for_peak = false);
// What the weights' shapes give (weights, gradients, optimiser states: the products' matrices
// grow with the square of the width; norms, embeddings, the head and adapters with the width):
// the parabola through 0, `narrow` and `twice`.
double widened_square(double narrow, double twice, int64_t k);

// One forward and backward at a probe shape.
struct ProbeReading {
  int64_t blocks = 0;         // 0: the whole model
  int64_t vocab = 0;          // 0: the model's own
  int64_t width_divisor = 1;  // the probe model's width is the model's over this
  int64_t experts = 0;        // a mixture of experts' in each MoE layer; 0: the model's own
  int64_t batch = 0;
  int64_t seq = 0;                // 0: a model without a sequence length
  int64_t inputs = 0;             // the synthetic batch's bytes
  int64_t activations = 0;        // left by the forward pass
  int64_t peak_above_start = -1;  // gradients cleared first, as a run does (the first probe)
  // With the gradients kept from the run before instead (every probe but the first): the
  // activation-bound peak, where every activation is alive and nothing of backward has been
  // freed; -1: not run.
  int64_t peak_above_start_kept = -1;
  int64_t gradients = 0;
};

struct MemoryFit {
  int64_t seq_len = 0;  // the benchmark's; 0: a model without a sequence length
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer_states = 0;
  int64_t optimizer_workspace = 0;  // the update's temporaries (foreach: a copy of the gradients)
  BatchSeqFit inputs, activations;
  // Backward's peak above its start with the gradients kept from the step before (every
  // activation alive, and backward's temporaries) is the activations and this much more; with
  // them cleared as a run does, the smallest probe's peak less the gradients (what backward
  // holds beside them at its end).
  BatchSeqFit backward_extra;
  // A model without a length: the same for backward's moment that grows fastest with the batch
  // (train/fit_probe.cpp), where the probes could align their moments; backward's extra is the
  // larger of the two.
  std::optional<BatchSeqFit> backward_steepest;
  int64_t gradient_peak_extra = 0;
  // --shard (parallelism's, features/parallelism/parallelism_memory.h): the unsharded gradients
  // a sharded backward holds at a time (the root's, one block's and its float32 buffer), beside
  // the activations early in backward, where the master shards' gradients have not arrived, and
  // beside those gradients at its end, where the activations are gone; 0: not sharded.
  int64_t sharded_unit_gradients = 0;
  std::string method;                // how it was probed, in words
  std::vector<std::string> counted;  // what was counted rather than probed, a line each
  std::vector<ProbeReading> readings;
  double probe_seconds = 0;

  // The breakdown at the peak for `batch` per device at seq_len.
  MemoryBreakdown breakdown_at(int64_t batch) const;
  int64_t peak_at(int64_t batch) const { return breakdown_at(batch).total(); }
  // The largest batch whose peak is at most `capacity` bytes, up to the batch_size setting's
  // bound (largest_batch_size); 0 when not even batch 1 fits.
  int64_t max_batch(int64_t capacity) const;
};

// The largest n in 1..largest for which `fits` holds, `fits` holding up to some n and not past
// it; 0 where not even 1 fits.
int64_t largest_fitting(int64_t largest, const std::function<bool(int64_t)>& fits);

}  // namespace gpubench
