// The weight-only kernels take a matrix of rows: an input [..., in] flattened to [rows, in], and
// the output given back its leading dimensions.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace gpubench::integer_weights {

inline torch::Tensor rows_of(const torch::Tensor& input) {
  return input.reshape({-1, input.size(-1)}).contiguous();
}

inline std::vector<int64_t> shape_with_last(const torch::Tensor& input, int64_t last) {
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  shape.back() = last;
  return shape;
}

}  // namespace gpubench::integer_weights
