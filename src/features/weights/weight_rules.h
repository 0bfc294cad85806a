// Weight formats' rules of resolve (docs/inference.md#integer-weights): the format infer holds the
// weights in (the precision's, or int8, int4, MXFP4), what it computes in and the kernels' rules.
#pragma once

#include "features/resolve_rule.h"

namespace gpubench::weights {

// A float format is the precision's (given alone it sets the precision; stored as none); int8 and
// int4 compute in bf16 and hold to the kernels' shape rules, checked on the model's declared
// shapes; the group only for int4.
void resolve_format(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// int4 on CUDA: LibTorch's kernel needs compute capability 8.0 or later.
void check_int4_kernel(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// infer holds the weights in the precision's format (fp32 for tf32; fp8 quantised once) or the
// integer one: a format the model declares.
void check_declared_format(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

// int4's rules on the model's linear weights (each rank's slice) at the benchmark's group: the
// kernels' shape rules (integer_weights::why_not_int4). Throws UsageError.
void check_int4_shapes(const ModelInfo& info, const ResolvedBenchmark& benchmark);

}  // namespace gpubench::weights
