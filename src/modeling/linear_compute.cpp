#include "modeling/linear_compute.h"

#include "modeling/flop_counter.h"

namespace gpubench::layers {

std::shared_ptr<LinearCompute> new_linear_compute() {
  return std::make_shared<LinearCompute>();
}

torch::Tensor LinearImpl::forward(const torch::Tensor& input) {
  return compute_->forward(input, weight, bias);
}

bool LinearImpl::hold_weight_in(const WeightFormat& format) {
  return compute_->quantize(*this, weight, format);
}

int64_t LinearImpl::bytes_change_in(const WeightFormat& format) const {
  return weight_bytes_change(weight, format);
}

torch::Tensor LinearCompute::forward(const torch::Tensor& input, const torch::Tensor& weight,
                                     const torch::Tensor& bias) {
  const bool frozen = !weight.requires_grad();
  if (quantized()) {
    const torch::Tensor output = quantized_forward(input, frozen);
    return bias.defined() ? held_->add_bias(output, bias) : output;
  }
  const int64_t in_features = weight.size(1), out_features = weight.size(0);
  const int64_t rows = input.numel() / in_features;
  const LinearProducts* products = LinearProducts::active();
  const bool weight_gradient = torch::GradMode::is_enabled() && !frozen;
  const bool rewritten =
      products != nullptr && products->runs(rows, in_features, out_features, weight_gradient);
  FlopCounter::record_multiply_adds(rows * in_features * out_features, frozen,
                                    rewritten && products->fp8_products());
  FlopCounter::record_weight_read(weight.nbytes());
  if (!rewritten) return torch::nn::functional::linear(input, weight, bias);
  const torch::Tensor output = products->linear(input, weight, product_state_);
  return bias.defined() ? output + bias.to(output.scalar_type()) : output;
}

// The products of a weight held quantised: what it reads is its codes and scales.
torch::Tensor LinearCompute::quantized_forward(const torch::Tensor& input, bool frozen) {
  const int64_t rows = input.numel() / in_features_;
  FlopCounter::record_multiply_adds(rows * in_features_ * out_features_, frozen,
                                    held_->fp8_products());
  FlopCounter::record_weight_read(held_->bytes());
  return held_->linear(input);
}

bool LinearCompute::quantize(torch::nn::Module& layer, torch::Tensor& weight,
                             const WeightFormat& format) {
  torch::NoGradGuard no_grad;
  return take(format.hold(layer, weight), weight);
}

bool LinearCompute::quantize_stack(torch::nn::Module& layer, torch::Tensor& stacked,
                                   const std::vector<int64_t>& parts, const WeightFormat& format) {
  torch::NoGradGuard no_grad;
  return take(format.hold_stack(layer, stacked, parts), stacked);
}

bool LinearCompute::take(std::unique_ptr<HeldWeight> held, torch::Tensor& weight) {
  if (held == nullptr) return false;
  out_features_ = weight.size(0);
  in_features_ = weight.size(1);
  held_ = std::move(held);
  weight.set_data(torch::empty({0}, weight.options()));
  return true;
}

int64_t weight_bytes_change(const torch::Tensor& weight, const WeightFormat& format) {
  const auto held = format.bytes_in(weight.size(0), weight.size(1));
  return held ? *held - weight.numel() * weight.element_size() : 0;
}

int64_t counted_bytes_change(torch::nn::Module& model, const WeightFormat& format) {
  int64_t change = 0;
  for (const auto& child : model.modules(/*include_self=*/true)) {
    if (auto* linear = dynamic_cast<QuantizableLinear*>(child.get())) {
      change += linear->bytes_change_in(format);
    }
  }
  return change;
}

QuantizedLayers quantize_linear_layers(torch::nn::Module& model, const WeightFormat& format) {
  QuantizedLayers counts;
  for (const auto& child : model.modules(/*include_self=*/true)) {
    auto* linear = dynamic_cast<QuantizableLinear*>(child.get());
    if (linear == nullptr) continue;
    (linear->hold_weight_in(format) ? counts.quantized : counts.kept) += 1;
  }
  return counts;
}

}  // namespace gpubench::layers
