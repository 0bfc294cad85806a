// The model's own rules of resolve: what it is fed (batch, lengths, objects, a mixture's top-k),
// what it serves (the task), what it needs (torchvision's operators, warm-up steps), each from
// its registration and capabilities.
#pragma once

#include <cstdint>

#include "features/resolve_rule.h"

namespace gpubench::model_inputs {

// infer, the models that generate text: the lengths when none are given.
inline constexpr int64_t kDefaultPromptLength = 512;
inline constexpr int64_t kDefaultGenerationLength = 128;

// The model's batch where not given; training at no fewer than the model's least per device.
void resolve_batch_size(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// tgt_len and mem_len: a model that reads token segments with a memory, and no other.
void resolve_segments(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// objects_per_image: the detection models', and no other's.
void resolve_objects(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// A model that calls torchvision's operators, where they load.
void require_vision_ops(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// seq_len: the token-sequence models', within their positions.
void resolve_sequence_length(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// blocks: training a transformer on fewer of its repeated blocks (a timeline for scale).
void check_blocks(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// The task, which the model must declare it runs; task infer: what the model serves, checked;
// prompt and generation lengths for the models that generate text (their requests are those,
// not a sequence length).
void resolve_task(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// A mixture of experts' top-k: 1 to its experts, its own where not given; dense models have none.
void resolve_experts_per_token(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// No fewer warm-up steps than the model needs to reach its steady state.
void check_warmup_steps(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

}  // namespace gpubench::model_inputs
