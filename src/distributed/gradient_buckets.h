// How DDP groups gradients into buckets (torch/nn/parallel/distributed.py, the Reducer): the
// trainable parameters in reverse registration order, the order backward produces them; a tensor
// listed twice (tied weights) once; grouped by features/parallelism/scaling/bucket_rule.h at
// `bucket_bytes`. The gradient synchronizer reduces these buckets and the step timeline times them,
// so a single-device run records the buckets a data-parallel one would all-reduce.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "features/parallelism/scaling/bucket_rule.h"

namespace gpubench {

struct GradientBuckets {
  std::vector<torch::Tensor> parameters;     // bucket order: reverse registration, distinct
  std::vector<size_t> bucket_of;             // per parameter above
  std::vector<std::vector<size_t>> members;  // per bucket: indices into `parameters`
  std::vector<int64_t> bytes;                // per bucket
  int64_t total_bytes() const;
};

GradientBuckets assign_gradient_buckets(const std::vector<torch::Tensor>& parameters,
                                        int64_t bucket_bytes);

}  // namespace gpubench
