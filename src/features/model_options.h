// What a model is built with for a benchmark (modeling's ModelOptions): the benchmark's sequence,
// detection and fine-tuning sections, and what the features applied to the model decide.
#pragma once

#include "modeling/model_registry.h"
#include "settings/benchmark.h"

namespace gpubench {

// `benchmark`'s sections, and each feature's part: tuning's LoRA adapters (the targets checked
// against the roles its model declares: throws UsageError), the weights' MXFP4 experts, a
// mixture's experts per token.
ModelOptions model_options_for(const ResolvedBenchmark& benchmark);

// The benchmark's model options as probed: under a model parallelism, one rank's model alone as
// its plug-in places it (ModelParallelism::place_one_rank_alone): with --tensor-parallel N, rank
// 0's slice of the model alone (parallelism::one_rank_alone), whose memory is a rank's without its
// collectives' buffers; with --expert-parallel N, a model with one rank's share of the experts
// (ModelOptions::experts) that its own tokens' routes all go to: evenly routed, a rank of N
// receives as many routes from its peers as its tokens make, and holds those rows while its
// experts compute (the exchanges' send and receive buffers left out).
ModelOptions probed_model_options(const ResolvedBenchmark& benchmark);

}  // namespace gpubench
