// How the counted linear layers (layers.h's Linear, adapted_linear.h's AdaptedLinear) compute
// y = x W^T + b, and what they report to an active FlopCounter: in FP8 where an
// fp8::TrainingScope is active and the shapes align (fp8::aligned), or from the weight
// quantised once for inference (FP8, or a weight-only integer format); else torch's linear, in
// autocast's dtype (docs/fp8.md, docs/inference.md#integer-weights).
#pragma once

#include <optional>
#include <variant>

#include <torch/torch.h>

#include "modeling/fp8_linear.h"
#include "modeling/integer_weights.h"

namespace gpubench::layers {

// How inference holds the linear layers' weights when not in the precision's dtype.
struct InferenceWeights {
  // kMxfp4: the experts of a mixture of experts only (modeling/mixture_of_experts.h); the
  // linear layers stay in the activations' dtype.
  enum class Format { kFp8, kInt8, kInt4, kMxfp4 };
  Format format = Format::kFp8;
  fp8::Recipe recipe = fp8::Recipe::kTensorwise;     // kFp8
  int64_t group = 128;                               // kInt4
  torch::ScalarType activations = torch::kBFloat16;  // the integer formats' scales
};

class LinearCompute {
 public:
  torch::Tensor forward(const torch::Tensor& input, const torch::Tensor& weight,
                        const torch::Tensor& bias);
  // Inference: the weight quantised once, registered on `layer` as buffers (weight_fp8 and
  // weight_scale; weight_int8 or weight_int4 and weight_scales); the float weight's storage is
  // freed. FP8 where its shape aligns (returns whether it was quantised); the integer formats
  // always (resolve refuses a shape they cannot hold).
  bool quantize(torch::nn::Module& layer, torch::Tensor& weight, const InferenceWeights& format);
  bool quantized() const { return !std::holds_alternative<std::monostate>(quantized_); }
  // The bytes a weight [out, in] would be held in by `quantize` in `format` (codes, scales and
  // zeros, in its layout); none where it would stay as it is (FP8 misaligned, MXFP4). Counted,
  // for fit where this build lacks the format's kernels; a test holds it to `quantize`.
  static std::optional<int64_t> bytes_in(int64_t out_features, int64_t in_features,
                                         const InferenceWeights& format);

 private:
  torch::Tensor quantized_forward(const torch::Tensor& input, bool frozen);

  std::variant<std::monostate, fp8::ScaledTensor, integer_weights::Int8Weight,
               integer_weights::Int4Weight>
      quantized_;
  fp8::FrozenWeightOperands frozen_;  // training in FP8 with a frozen weight
  fp8::Recipe recipe_ = fp8::Recipe::kTensorwise;
  int64_t in_features_ = 0, out_features_ = 0;
};

// A linear layer whose weight inference can quantise to FP8.
class QuantizableLinear {
 public:
  virtual ~QuantizableLinear() = default;
  virtual bool quantize_for_inference(const InferenceWeights& format) = 0;
  // What quantize_for_inference(format) would change its bytes by (LinearCompute::bytes_in less
  // the weight's own); 0 where it would keep them.
  virtual int64_t bytes_change_in(const InferenceWeights& format) const = 0;
};

// Every QuantizableLinear of `model` whose shape aligns, quantised; returns how many were and
// how many stayed in their dtype.
struct QuantizedLayers {
  int quantized = 0;
  int kept = 0;
};
QuantizedLayers quantize_linear_layers(torch::nn::Module& model, const InferenceWeights& format);
// What quantize_linear_layers(model, format) would change the model's bytes by, counted from the
// layers' shapes without quantising.
int64_t counted_bytes_change(torch::nn::Module& model, const InferenceWeights& format);
// The change for one layer's float `weight`: bytes_in less the weight's own.
int64_t weight_bytes_change(const torch::Tensor& weight, const InferenceWeights& format);

}  // namespace gpubench::layers
