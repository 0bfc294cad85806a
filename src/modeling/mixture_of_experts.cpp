#include "modeling/mixture_of_experts.h"

#include <cmath>

#include "modeling/flop_counter.h"

namespace gpubench::moe {

TopKRouterImpl::TopKRouterImpl(int64_t hidden, int64_t experts, int64_t top_k) : top_k_(top_k) {
  weight = register_parameter("weight", torch::empty({experts, hidden}));
  bias = register_parameter("bias", torch::zeros({experts}));
}

Routes TopKRouterImpl::forward(const torch::Tensor& tokens) {
  const torch::Tensor logits = torch::linear(tokens, weight, bias);
  FlopCounter::record_multiply_adds(tokens.size(0) * weight.numel(), !weight.requires_grad());
  auto [top, experts] = logits.topk(top_k_, -1);
  return {experts, torch::softmax(top, 1, top.scalar_type())};
}

void ExpertLoad::add(const torch::Tensor& routes_per_expert) {
  counts_ = counts_.defined() ? counts_ + routes_per_expert : routes_per_expert;
}

std::vector<int64_t> ExpertLoad::tokens_per_expert() const {
  if (!counts_.defined()) return {};
  const torch::Tensor host = counts_.to(torch::kCPU, torch::kLong).contiguous();
  return {host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel()};
}

namespace {

// Buffers for a weight [experts, out, in] in MXFP4 (mxfp4_weights.h's layout), undrawn.
mxfp4::Mxfp4Weight register_mxfp4(torch::nn::Module& module, const std::string& name,
                                  int64_t experts, int64_t out, int64_t in, torch::Device device) {
  const auto bytes = torch::TensorOptions().dtype(torch::kUInt8).device(device);
  mxfp4::Mxfp4Weight weight{
      torch::empty({experts, out, in / mxfp4::kBlock, mxfp4::kBlock / 2}, bytes),
      torch::empty({experts, out, in / mxfp4::kBlock}, bytes)};
  weight.blocks = module.register_buffer(name + "_blocks", weight.blocks);
  weight.scales = module.register_buffer(name + "_scales", weight.scales);
  return weight;
}

void quantize_into(const mxfp4::Mxfp4Weight& target, int64_t expert, const torch::Tensor& weight) {
  const mxfp4::Mxfp4Weight one = mxfp4::quantize(weight);
  target.blocks[expert].copy_(one.blocks);
  target.scales[expert].copy_(one.scales);
}

}  // namespace

ExpertsImpl::ExpertsImpl(ExpertsOptions options) : options_(std::move(options)) {
  const int64_t e = options_.experts, h = options_.hidden, i = options_.intermediate;
  const std::vector<int64_t> gate_up_shape = {e, 2 * i, h}, down_shape = {e, h, i};
  const auto empty_unless_float = [&](const std::vector<int64_t>& shape) {
    return options_.mxfp4 ? torch::empty({0}) : torch::empty(shape);
  };
  gate_up_proj = register_parameter("gate_up_proj", empty_unless_float(gate_up_shape),
                                    /*requires_grad=*/!options_.mxfp4);
  gate_up_proj_bias = register_parameter("gate_up_proj_bias", torch::zeros({e, 2 * i}));
  down_proj = register_parameter("down_proj", empty_unless_float(down_shape), !options_.mxfp4);
  down_proj_bias = register_parameter("down_proj_bias", torch::zeros({e, h}));
  if (options_.mxfp4) hold_in_mxfp4(torch::kCPU);
}

void ExpertsImpl::hold_in_mxfp4(torch::Device device) {
  const int64_t e = options_.experts, h = options_.hidden, i = options_.intermediate;
  gate_up_mxfp4_ = register_mxfp4(*this, "gate_up_proj", e, 2 * i, h, device);
  down_mxfp4_ = register_mxfp4(*this, "down_proj", e, h, i, device);
}

void ExpertsImpl::initialize_mxfp4(double std) {
  torch::NoGradGuard no_grad;
  // Uniform codes have an rms of sqrt(68.5 / 8) = 2.93 scale units: the power of two nearest
  // std / 2.93 gives the drawn weights about the asked rms (2^-7: 0.023 for 0.02).
  const double rms_of_codes = std::sqrt(68.5 / 8);
  const int64_t exponent = std::lround(std::log2(std / rms_of_codes));
  for (const mxfp4::Mxfp4Weight* weight : {&*gate_up_mxfp4_, &*down_mxfp4_}) {
    weight->blocks.random_(0, 256);
    weight->scales.fill_(exponent + 127);
  }
}

torch::Tensor ExpertsImpl::weight_of(const torch::Tensor& weight,
                                     const std::optional<mxfp4::Mxfp4Weight>& quantized,
                                     int64_t expert, torch::ScalarType dtype) const {
  if (!quantized) {
    FlopCounter::record_weight_read(weight[expert].nbytes());
    return weight[expert];
  }
  const mxfp4::Mxfp4Weight one = quantized->select(expert);
  FlopCounter::record_weight_read(one.bytes());
  return mxfp4::dequantize(one, dtype);
}

torch::Tensor ExpertsImpl::expert_output(int64_t expert, const torch::Tensor& rows) {
  const torch::ScalarType dtype = rows.scalar_type();
  const torch::Tensor gate_up = torch::linear(
      rows, weight_of(gate_up_proj, gate_up_mxfp4_, expert, dtype), gate_up_proj_bias[expert]);
  const torch::Tensor out =
      torch::linear(options_.activation(gate_up), weight_of(down_proj, down_mxfp4_, expert, dtype),
                    down_proj_bias[expert]);
  FlopCounter::record_multiply_adds(rows.size(0) * 3 * options_.hidden * options_.intermediate,
                                    mxfp4() || !gate_up_proj.requires_grad());
  return out;
}

torch::Tensor ExpertsImpl::forward(const torch::Tensor& tokens, const Routes& routes) {
  const int64_t k = routes.experts.size(1), experts = options_.experts;
  const torch::Tensor chosen = routes.experts.reshape({-1});
  // Routes to no expert of this module's in one more bin, after every expert's.
  const torch::Tensor bin = chosen.masked_fill((chosen < 0) | (chosen >= experts), experts);
  const torch::Tensor routes_per_bin = torch::bincount(bin, {}, experts + 1);
  load_.add(routes_per_bin.narrow(0, 0, experts));
  const torch::Tensor per_expert = routes_per_bin.to(torch::kCPU);
  // The routes in expert order (stable: a token's rows keep their order within an expert).
  const torch::Tensor order = std::get<1>(bin.sort(/*stable=*/true, 0, false));
  const torch::Tensor token_of = order.div(k, "floor");
  const torch::Tensor weight_of_route = routes.weights.reshape({-1}).index_select(0, order);
  torch::Tensor output = torch::zeros_like(tokens);
  int64_t first = 0;
  const int64_t* counts = per_expert.data_ptr<int64_t>();
  for (int64_t expert = 0; expert < experts; ++expert) {
    const int64_t rows = counts[expert];
    if (rows == 0) continue;
    const torch::Tensor tokens_here = token_of.narrow(0, first, rows);
    const torch::Tensor out = expert_output(expert, tokens.index_select(0, tokens_here));
    output.index_add_(
        0, tokens_here,
        (out * weight_of_route.narrow(0, first, rows).unsqueeze(1)).to(tokens.scalar_type()));
    first += rows;
  }
  return output;
}

void ExpertsImpl::quantize_mxfp4() {
  if (mxfp4()) return;
  torch::NoGradGuard no_grad;
  hold_in_mxfp4(gate_up_proj.device());
  for (int64_t expert = 0; expert < options_.experts; ++expert) {
    quantize_into(*gate_up_mxfp4_, expert, gate_up_proj[expert]);
    quantize_into(*down_mxfp4_, expert, down_proj[expert]);
  }
  for (torch::Tensor* weight : {&gate_up_proj, &down_proj}) {
    weight->set_data(torch::empty({0}, weight->options()));
  }
}

bool ExpertsImpl::quantize_for_inference(const layers::InferenceWeights& format) {
  if (format.format != layers::InferenceWeights::Format::kMxfp4) return false;
  quantize_mxfp4();
  return true;
}

}  // namespace gpubench::moe
