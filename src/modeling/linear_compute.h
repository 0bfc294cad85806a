// How the counted linear layers (include/gpubench/layers.h's Linear, adapted_linear.h's
// AdaptedLinear) compute y = x W^T + b, and what they report to an active FlopCounter: by the
// product rule active on the thread where it runs the shape (modeling/linear_products.h: precision
// fp8's training products), or from the weight held in a format (modeling/weight_formats.h: FP8,
// int8, int4, NF4); else torch's linear, in autocast's dtype. Both are applied from outside
// (src/features/; docs/fp8.md, docs/inference.md#integer-weights).
#pragma once

#include <memory>

#include <torch/torch.h>

#include "gpubench/layers.h"  // QuantizableLinear
#include "modeling/linear_products.h"
#include "modeling/weight_formats.h"

namespace gpubench::layers {

class LinearCompute {
 public:
  torch::Tensor forward(const torch::Tensor& input, const torch::Tensor& weight,
                        const torch::Tensor& bias);
  // Inference: the weight held once in `format` (WeightFormat::hold), its parts registered on
  // `layer` as buffers; the float weight's storage is freed. Returns whether the format held it
  // (FP8 keeps a misaligned shape; resolve refuses a shape the integer formats cannot hold).
  bool quantize(torch::nn::Module& layer, torch::Tensor& weight, const WeightFormat& format);
  // The same for a stack of weights of `parts` rows each (WeightFormat::hold_stack).
  bool quantize_stack(torch::nn::Module& layer, torch::Tensor& stacked,
                      const std::vector<int64_t>& parts, const WeightFormat& format);
  bool quantized() const { return held_ != nullptr; }

 private:
  torch::Tensor quantized_forward(const torch::Tensor& input, bool frozen);
  bool take(std::unique_ptr<HeldWeight> held, torch::Tensor& weight);

  std::shared_ptr<const HeldWeight> held_;
  std::shared_ptr<ProductState> product_state_;  // the active product rule's, for this layer
  int64_t in_features_ = 0, out_features_ = 0;
};

// Every QuantizableLinear of `model` whose shape aligns, quantised; returns how many were and
// how many stayed in their dtype.
struct QuantizedLayers {
  int quantized = 0;
  int kept = 0;
};
QuantizedLayers quantize_linear_layers(torch::nn::Module& model, const WeightFormat& format);
// What quantize_linear_layers(model, format) would change the model's bytes by, counted from the
// layers' shapes without quantising.
int64_t counted_bytes_change(torch::nn::Module& model, const WeightFormat& format);
// The change for one layer's float `weight`: bytes_in less the weight's own.
int64_t weight_bytes_change(const torch::Tensor& weight, const WeightFormat& format);

}  // namespace gpubench::layers
