#include "features/weights/nf4_weights.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "modeling/weight_formats.h"
#include "torch_support/compat.h"

namespace gpubench::nf4 {
namespace {

constexpr float kCodebook[16] = {-1.0f,
                                 -0.6961928009986877f,
                                 -0.5250730514526367f,
                                 -0.39491748809814453f,
                                 -0.28444138169288635f,
                                 -0.18477343022823334f,
                                 -0.09105003625154495f,
                                 0.0f,
                                 0.07958029955625534f,
                                 0.16093020141124725f,
                                 0.24611230194568634f,
                                 0.33791524171829224f,
                                 0.44070982933044434f,
                                 0.5626170039176941f,
                                 0.7229568362236023f,
                                 1.0f};

// The values of every byte's two codes, [256, 2] float32 (the high nibble's first), on
// `device`, copied there once (never inside a CUDA graph's capture) and kept for the process's
// life, past CUDA's own teardown. A byte indexes its pair directly: one gather a weight's half.
torch::Tensor pairs_on(const torch::Device& device) {
  static std::mutex mutex;
  static auto* tables = new std::map<std::string, torch::Tensor>();
  const std::lock_guard<std::mutex> lock(mutex);
  torch::Tensor& table = (*tables)[device.str()];
  if (!table.defined()) {
    std::vector<float> pairs;
    for (int byte = 0; byte < 256; ++byte) {
      pairs.push_back(kCodebook[byte >> 4]);
      pairs.push_back(kCodebook[byte & 15]);
    }
    table = torch::from_blob(pairs.data(), {256, 2}, torch::kFloat).to(device, false, true);
  }
  return table;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The base product, its backward dequantising the weight again.
class Nf4Product : public torch::autograd::Function<Nf4Product> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input,
                               const torch::Tensor& packed, const torch::Tensor& absmax,
                               int64_t out_features, int64_t in_features) {
    ctx->save_for_backward({packed, absmax});
    ctx->saved_data["out"] = out_features;
    ctx->saved_data["in"] = in_features;
    ctx->saved_data["dtype"] = static_cast<int64_t>(input.scalar_type());
    const torch::ScalarType compute = compat::autocast_enabled(input.device().type())
                                          ? compat::autocast_dtype(input.device().type())
                                          : input.scalar_type();
    const Nf4Weight weight{packed, absmax, out_features, in_features};
    return torch::matmul(input.to(compute), dequantize(weight, compute).t());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const Nf4Weight weight{saved[0], saved[1], ctx->saved_data["out"].toInt(),
                           ctx->saved_data["in"].toInt()};
    const auto input_dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    const torch::Tensor& grad = grads[0];
    const torch::Tensor input_grad =
        torch::matmul(grad, dequantize(weight, grad.scalar_type())).to(input_dtype);
    return {input_grad, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

class HeldNf4Weight : public layers::HeldWeight {
 public:
  explicit HeldNf4Weight(Nf4Weight weight) : weight_(std::move(weight)) {}
  torch::Tensor linear(const torch::Tensor& input) const override {
    return nf4::linear(input, weight_);
  }
  int64_t bytes() const override { return weight_.bytes(); }
  // The bias as it is: a float32 bias promotes autocast's product to float32, as QLoRA's layers
  // have added it since they were built (bitsandbytes' Linear4bit casts it to the input's dtype).
  torch::Tensor add_bias(const torch::Tensor& output, const torch::Tensor& bias) const override {
    return output + bias;
  }

 private:
  Nf4Weight weight_;
};

class Nf4Format : public layers::WeightFormat {
 public:
  std::string name() const override { return "nf4"; }
  std::unique_ptr<layers::HeldWeight> hold(torch::nn::Module& layer,
                                           const torch::Tensor& weight) const override {
    Nf4Weight quantized = quantize(weight);
    quantized.packed = layer.register_buffer("weight_nf4", quantized.packed);
    quantized.absmax = layer.register_buffer("weight_absmax", quantized.absmax);
    return std::make_unique<HeldNf4Weight>(std::move(quantized));
  }
  std::optional<int64_t> bytes_in(int64_t out_features, int64_t in_features) const override {
    const int64_t weights = out_features * in_features;
    if (!why_not(weights).empty()) return std::nullopt;
    return weights / 2 + weights / kBlock * 4;
  }
};

// Not a value of `weights` (infer's): QLoRA holds its frozen base so (features/tuning/qlora.h).
const layers::WeightFormatRegistration kNf4Format{
    {"nf4", /*integer_codes=*/false,
     [](const layers::WeightFormatOptions&) { return std::make_shared<const Nf4Format>(); }}};

}  // namespace

const float* codebook() {
  return kCodebook;
}

double largest_rounding() {
  double widest = 0;
  for (int i = 0; i + 1 < 16; ++i)
    widest = std::max<double>(widest, kCodebook[i + 1] - kCodebook[i]);
  return widest / 2;
}

std::string why_not(int64_t numel) {
  if (numel % kBlock == 0) return "";
  return "its " + std::to_string(numel) + " weights are not a whole number of NF4's blocks of " +
         std::to_string(kBlock);
}

Nf4Weight quantize(const torch::Tensor& weight) {
  torch::NoGradGuard no_grad;
  const torch::Tensor blocks = weight.detach().to(torch::kFloat).reshape({-1, kBlock});
  const torch::Tensor absmax = blocks.abs().amax(1, true).clamp_min(1e-12);
  const torch::Tensor table =
      torch::from_blob(const_cast<float*>(kCodebook), {16}, torch::kFloat).to(weight.device());
  const torch::Tensor midpoints = (table.slice(0, 1) + table.slice(0, 0, 15)) / 2;
  const torch::Tensor codes = torch::bucketize(blocks / absmax, midpoints).to(torch::kUInt8);
  const torch::Tensor pairs = codes.reshape({-1, 2});
  Nf4Weight out;
  out.packed = pairs.select(1, 0).bitwise_left_shift(4).bitwise_or(pairs.select(1, 1));
  out.absmax = absmax.reshape({-1});
  out.out_features = weight.size(0);
  out.in_features = weight.size(1);
  // The weights are quantised where they will run: the table made now is not allocated inside
  // the first step, whose memory fit measures (fit_probe.cpp).
  pairs_on(weight.device());
  return out;
}

// The transients, a weight: the index (4 bytes a pair: 2), the float32 values (4, scaled in
// place) and the result in `dtype`.
torch::Tensor dequantize(const Nf4Weight& weight, torch::ScalarType dtype) {
  torch::Tensor values =
      pairs_on(weight.packed.device()).index_select(0, weight.packed.to(torch::kInt));
  values.view({-1, kBlock}).mul_(weight.absmax.unsqueeze(1));
  return values.view({weight.out_features, weight.in_features}).to(dtype);
}

torch::Tensor linear(const torch::Tensor& input, const Nf4Weight& weight) {
  return Nf4Product::apply(input, weight.packed, weight.absmax, weight.out_features,
                           weight.in_features);
}

}  // namespace gpubench::nf4
