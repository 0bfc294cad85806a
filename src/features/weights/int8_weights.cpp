#include "features/weights/int8_weights.h"

#include "kernels/fused_operators.h"
#include "modeling/weight_formats.h"

namespace gpubench::integer_weights {
namespace {

class HeldInt8Weight : public layers::HeldWeight {
 public:
  explicit HeldInt8Weight(Int8Weight weight) : weight_(std::move(weight)) {}
  torch::Tensor linear(const torch::Tensor& input) const override {
    return integer_weights::linear(input, weight_);
  }
  int64_t bytes() const override { return weight_.codes.nbytes() + weight_.scales.nbytes(); }

 private:
  Int8Weight weight_;
};

class Int8Format : public layers::WeightFormat {
 public:
  explicit Int8Format(torch::ScalarType activations) : activations_(activations) {}
  std::string name() const override { return "int8"; }
  // A scale for each row (and group of its inputs): a stack is held as one weight.
  std::unique_ptr<layers::HeldWeight> hold_stack(torch::nn::Module& layer,
                                                 const torch::Tensor& stacked,
                                                 const std::vector<int64_t>&) const override {
    return hold(layer, stacked);
  }
  std::unique_ptr<layers::HeldWeight> hold(torch::nn::Module& layer,
                                           const torch::Tensor& weight) const override {
    Int8Weight quantized = quantize_int8(weight, activations_);
    quantized.codes = layer.register_buffer("weight_int8", quantized.codes);
    quantized.scales = layer.register_buffer("weight_scales", quantized.scales);
    return std::make_unique<HeldInt8Weight>(std::move(quantized));
  }
  std::optional<int64_t> bytes_in(int64_t out_features, int64_t in_features) const override {
    return out_features * in_features + out_features * c10::elementSize(activations_);
  }

 private:
  torch::ScalarType activations_;
};

const layers::WeightFormatRegistration kInt8Format{
    {"int8", /*integer_codes=*/true, [](const layers::WeightFormatOptions& options) {
       return std::make_shared<const Int8Format>(options.activations);
     }}};

}  // namespace

Int8Weight quantize_int8(const torch::Tensor& weight, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  const torch::Tensor values = weight.to(torch::kFloat);
  const torch::Tensor scales = values.abs().amax(1).clamp_min(1e-12) / 127;
  const torch::Tensor codes = (values / scales.unsqueeze(1)).round_().clamp_(-128, 127);
  return {codes.to(torch::kChar), scales.to(dtype)};
}

torch::Tensor linear(const torch::Tensor& input, const Int8Weight& weight) {
  return kernels::int8_weight_linear(input, weight.codes, weight.scales);
}

}  // namespace gpubench::integer_weights
