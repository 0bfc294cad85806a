// What `gpubench fit`'s probes of a training step (train/fit_probe.h) and of a generation
// (infer/inference_fit_probe.h) share (docs/memory.md): which models they build (the whole one,
// or one and two of its blocks at a narrowed vocabulary), whether the host can hold them, and at
// which batches and lengths they run.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "modeling/linear_compute.h"
#include "modeling/model_registry.h"
#include "settings/benchmark.h"

namespace gpubench {

struct FitOptions {
  // Probe with one and two blocks even where the whole model could be built (tests).
  bool force_blocks = false;
  // Probes by blocks narrow a large vocabulary and extend it (fit_probes.cpp); false: the model's
  // own vocabulary in every probe (tests).
  bool narrow_vocab = true;
  // The probes of a counted model hold its weights, and the gradients they keep, in one buffer
  // per dtype (memory/shared_storage.h); false: each tensor its own (tests).
  bool shared_storage = true;
  // The host's available memory the probes are checked against; unset: MemAvailable (tests).
  std::optional<int64_t> host_available;
  // On the CPU, the probes' sequence length is halved until the largest probe's forward and
  // backward (a generation's: its prompt's pass) is at most this many FLOPs (the fit must take
  // seconds, not hours, there); a sixteenth of it for bf16 and fp16 where LibTorch's 16-bit
  // matmuls would run its reference kernel (fit_probes.cpp).
  double cpu_flop_budget = 2e11;
  // ... but not below this length, the longest probe's (the others run at about a half and a
  // quarter of it: 2 and 1 at the shortest). With batch 1 and 2 probed, the fit tells what
  // grows per item from what grows once per step at every length, so short probes scale: for
  // Llama 3 8B, probes up to length 4 predict its peak at 256 within 0.2 % of probes up to
  // 128. CPU bf16 matmuls run on one core here, and short probes keep fit for Llama 3 8B under
  // a minute.
  int64_t shortest_probe = 3;
  // fit --task infer: the linear layers' weights counted in this format (their layout's bytes,
  // layers::WeightFormat::bytes_in) while the probes hold them in the precision's dtype: fit's
  // stand-in where this build lacks the format's kernels (launcher/prediction_subject.h); null:
  // none.
  std::shared_ptr<const layers::WeightFormat> counted_weights;
  // The divisor the probes by blocks narrow the width by (ModelOptions::width_divisor), where
  // the model allows it; unset: fit's choice (kRealWidthProbeBytes), 1: never (tests).
  std::optional<int64_t> width_divisor;
  // A mixture of experts' probes by blocks hold its top-k experts and twice that
  // (ModelOptions::experts) where the model has four times as many or more; false: every probe
  // all of them (tests).
  bool narrow_experts = true;
  // QLoRA probed as LoRA, its NF4 weights and their dequantising counted (fit_probe.cpp); false:
  // probed as it runs (tests).
  bool qlora_as_lora = true;
};

// Throws UsageError for a benchmark fit cannot predict as given: no batch, or --blocks (fit
// predicts the whole model, probing blocks itself).
void check_fit_shape(const ResolvedBenchmark& b);

struct ProbeShape {
  int64_t batch, seq;  // seq 0: a model without a sequence length
};
// The progress of probe `index` of `shapes` starting (common/phase_progress.h), named
// "batch 2" or "batch 2 x 512 tokens".
void report_probing(const std::vector<ProbeShape>& shapes, size_t index);

// A training or generation probe's reading (ProbeReading, InferenceProbeReading) with what
// names it: its model's narrowing and its shape.
template <typename Reading>
Reading probe_reading(const ModelOptions& options, const ProbeShape& shape) {
  Reading reading;
  reading.blocks = options.blocks;
  reading.vocab = options.vocab;
  reading.width_divisor = options.width_divisor;
  reading.experts = options.experts;
  reading.batch = shape.batch;
  reading.seq = shape.seq;
  return reading;
}

// Probes by blocks whose two-block model would hold more than this (weights and gradients, as
// planned) at the model's width are narrowed in width, where the model allows a divisor of 4 or
// more: Llama 3.1 405B's two blocks hold 12.8 GB in bf16, and each pass of a probe at its width
// streams them from memory (fit is to answer within 4 GB and seconds).
inline constexpr int64_t kRealWidthProbeBytes = int64_t{4} << 30;

// The probes by blocks narrow a large vocabulary to this many tokens, and to twice it for the
// third probe: the token embedding, the output head, the logits and the loss's temporaries grow
// in proportion to it, and at 128K tokens they are most of a one-block model's memory and time.
inline constexpr int64_t kProbeVocab = 2048;

// The probe models: the whole one, or one and two groups of blocks (a group: the model's
// ModelCapabilities::block_period blocks, one for most), at a narrowed vocabulary with one group
// at twice it for a large one.
struct ProbeModels {
  bool by_blocks = false, narrowed = false;
  ModelOptions one_block, two_blocks, wider;
  // The three models' options, to set one thing on all of them.
  std::array<ModelOptions*, 3> each_model() { return {&one_block, &two_blocks, &wider}; }
  // Narrowed in width too (ModelOptions::width_divisor): the models above at this divisor, and
  // at_width(width_divisor / 2), every figure then widened to the model's width
  // (fit_prediction.h's widened_figure and widened_square). 1: the model's width.
  int64_t width_divisor = 1;
  bool keeps_key_value_heads = false;  // ModelOptions::width_keeps_key_value_heads
  ProbeModels at_width(int64_t divisor, bool keeping_key_value_heads = false) const;
  // The second width the figures are widened from: these models at twice the width.
  ProbeModels twice_as_wide() const { return at_width(width_divisor / 2, keeps_key_value_heads); }
  // A mixture of experts' probes with fewer experts (ModelOptions::experts): the models above
  // with this many in each MoE layer (its top-k: every token visits all of them) and
  // with_twice_the_experts(), the figures extended on the line through the two to the model's
  // count: a training step's all of them (train/fit_probe.cpp, its tokens routed in turn), a
  // generation's weights (infer/inference_fit_probe.cpp: its passes' moments are the first's,
  // the second's models built for their weights alone). 0: the model's.
  int64_t experts = 0;
  // The count the line extends to: the model's, or one expert-parallel rank's (held_experts).
  int64_t held_experts = 0;
  ProbeModels with_experts(int64_t count) const;
  ProbeModels with_twice_the_experts() const { return with_experts(2 * experts); }
  // held_experts over `experts`: how far the line extends.
  int64_t experts_factor() const;
  // Every probe model of the set at its largest: at the wider width and with more experts where
  // those are probed too (what the host must hold).
  ProbeModels largest_set() const;
  // The largest probe model at the model's width (two blocks, or the whole model): what the
  // CPU's probe length is chosen by (probe_length), so that narrowing the width changes the
  // probes' cost, not their lengths.
  ModelOptions largest(const ModelOptions& whole) const;
  // The factors that extend the probes to the whole model (fit_prediction.h's extended_figure):
  // groups of blocks beyond the first, and vocabularies beyond the narrowed one.
  double extra_blocks(const ModelInfo& info) const;
  double extra_vocabularies(const ModelInfo& info) const;
};

// What a probe model's tensors hold while it runs, planned from its configuration (0 for a
// model that is not counted).
using ProbeBytes = std::function<int64_t(const ModelOptions&)>;

// By blocks where the model's planned bytes exceed what may be built whole (on the CPU 2 GiB; on
// a GPU half its memory) or the options force it.
// Whether the probes build the model undrawn, its weights zeroed (over one shared buffer where
// FitOptions::shared_storage): a model counted by rule (ModelInfo::count), or one whose memory does
// not depend on its weights' values (ModelCapabilities::memory_independent_of_weights).
bool probed_undrawn(const ModelInfo& info);

ProbeModels probe_models(const ModelInfo& info, const ModelOptions& options, torch::Device device,
                         const FitOptions& fit_options, const ProbeBytes& bytes);

// Refuses (UsageError) before the probes start where the host cannot hold the largest probe
// model; `what` names what its bytes are ("for its gradients").
void check_host_memory(const ProbeModels& models, const ModelOptions& whole,
                       const ResolvedBenchmark& b, const FitOptions& fit_options,
                       const ProbeBytes& bytes, const std::string& what);

// What a probe runs: a training step's forward and backward, or a generation's forward passes.
enum class ProbePass { kForwardAndBackward, kForward };

// The probes' sequence length: `seq`, halved on the CPU until the largest probe (batch 2) is
// within the FLOP budget (a sixteenth of it where LibTorch's reference 16-bit kernel would run
// them: fit_probes.cpp); `flops_per_token` is one item's per token (per item where the model has
// no length).
int64_t probe_length(int64_t seq, const ResolvedBenchmark& b, double flops_per_token,
                     const FitOptions& fit, ProbePass pass);

// Batch 1 at a quarter of the length, then batch 1 and 2 at half of it and at it (1, 2 and 3 at
// the shortest): what grows per item and what grows once per step are told apart at every
// length. Without a length, batch 1 and 2. A model that trains from a larger batch only
// (ModelInfo::min_training_batch) is probed at that batch where 1 is said, and twice it for 2.
std::vector<ProbeShape> probe_shapes(int64_t seq, int64_t smallest_batch = 1);
std::string shapes_text(const std::vector<ProbeShape>& shapes);

// "forward and backward of the model with 1 and with 2 of its 32 blocks at a vocabulary of ...
// extended to 32 blocks and 128256 tokens": `what` ran, how the probe models were cut.
std::string probe_method(const std::string& what, const ProbeModels& models, const ModelInfo& info,
                         const std::vector<ProbeShape>& shapes, const ResolvedBenchmark& b);

// A mixture of experts' experts in each layer of the model `options` build: one expert-parallel
// rank's share where the probes' options set it (features/model_options.h:
// probed_model_options), else the model's.
int64_t held_experts(const ModelInfo& info, const ModelOptions& options);

}  // namespace gpubench
