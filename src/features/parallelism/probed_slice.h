// What fit's probes of one rank measure under the parallel features (docs/memory.md): which
// narrowed widths keep the model's tensor-parallel split whole, and which slice was probed, in
// the fit's method. The probes themselves are fit's (run/fit_probes.h); the rank they build is
// its model parallelism's (ModelParallelism::place_one_rank_alone).
#pragma once

#include <cstdint>
#include <string>

#include "modeling/model_registry.h"
#include "settings/benchmark.h"

namespace gpubench::parallelism {

// Whether the model at 1/k of its width still splits over `ranks` tensor-parallel ranks: every
// count a rank splits (the vocabulary aside: the probes narrow it; the key/value heads where
// kept whole) divides by k, and the quotient by the ranks.
bool splits_at_width(const TensorParallelSplits& split_counts, int64_t ranks, int64_t k,
                     bool keeping_key_value_heads);

// The slice one rank's probes held, as the fit's method says it (", one tensor-parallel rank's
// slice of 8 (...)"): its model parallelism's (ModelParallelism::probed_slice); empty without one.
std::string probed_slice(const ResolvedBenchmark& b, const ModelInfo& info);

}  // namespace gpubench::parallelism
