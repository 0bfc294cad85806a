// How the counted linear layers (layers.h's Linear, adapted_linear.h's AdaptedLinear) compute
// y = x W^T + b, and what they report to an active FlopCounter: in FP8 where an
// fp8::TrainingScope is active and the shapes align (fp8::aligned), or from the weight
// quantised once for inference; else torch's linear, in autocast's dtype (docs/fp8.md).
#pragma once

#include <optional>

#include <torch/torch.h>

#include "modeling/fp8_linear.h"

namespace gpubench::layers {

class LinearCompute {
 public:
  torch::Tensor forward(const torch::Tensor& input, const torch::Tensor& weight,
                        const torch::Tensor& bias);
  // Inference: the weight in e4m3 once, when its shape aligns, registered on `layer` as the
  // buffers weight_fp8 and weight_scale; the float weight's storage is freed. Returns whether
  // it was quantised.
  bool quantize(torch::nn::Module& layer, torch::Tensor& weight, fp8::Recipe recipe);
  bool quantized() const { return quantized_.has_value(); }

 private:
  std::optional<fp8::ScaledTensor> quantized_;
  fp8::FrozenWeightOperands frozen_;  // training in FP8 with a frozen weight
  fp8::Recipe recipe_ = fp8::Recipe::kTensorwise;
  int64_t in_features_ = 0, out_features_ = 0;
};

// A linear layer whose weight inference can quantise to FP8.
class QuantizableLinear {
 public:
  virtual ~QuantizableLinear() = default;
  virtual bool quantize_for_inference(fp8::Recipe recipe) = 0;
};

// Every QuantizableLinear of `model` whose shape aligns, quantised; returns how many were and
// how many stayed in their dtype.
struct QuantizedLayers {
  int quantized = 0;
  int kept = 0;
};
QuantizedLayers quantize_linear_layers(torch::nn::Module& model, fp8::Recipe recipe);

}  // namespace gpubench::layers
