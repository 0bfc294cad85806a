// Tuning's rules of resolve (docs/training.md): what trains and how (the optimiser, LoRA's and
// QLoRA's adapters, activation checkpointing).
#pragma once

#include "features/resolve_rule.h"

namespace gpubench::tuning {

// An optimiser from the registry, for training only; the model's own stored as none.
void resolve_optimizer(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// LoRA and QLoRA: a model that declares the roles adapters go on; the targets in canonical form
// (the model's role order; every role is "all-linear"), each under its projection's rank limit;
// for full tuning, no adapter setting.
void resolve_adapters(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// A model whose transformer blocks can recompute their activations in backward.
void check_activation_checkpointing(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

}  // namespace gpubench::tuning
