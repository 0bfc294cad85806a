#include "modeling/mixture_of_experts.h"

#include <cmath>

#include "modeling/flop_counter.h"

namespace gpubench::moe {

TopKRouterImpl::TopKRouterImpl(int64_t hidden, int64_t experts, int64_t top_k, bool balanced)
    : top_k_(top_k), balanced_(balanced) {
  weight = register_parameter("weight", torch::empty({experts, hidden}));
  bias = register_parameter("bias", torch::zeros({experts}));
}

Routes TopKRouterImpl::forward(const torch::Tensor& tokens) {
  const torch::Tensor logits = torch::linear(tokens, weight, bias);
  FlopCounter::record_multiply_adds(tokens.size(0) * weight.numel(), !weight.requires_grad());
  if (balanced_) {
    const auto longs = torch::TensorOptions().device(tokens.device()).dtype(torch::kLong);
    const torch::Tensor experts =
        (torch::arange(tokens.size(0), longs).unsqueeze(1) * top_k_ + torch::arange(top_k_, longs))
            .remainder(weight.size(0));
    const torch::Tensor chosen = logits.gather(1, experts);
    return {experts, torch::softmax(chosen, 1, chosen.scalar_type())};
  }
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

ExpertsImpl::ExpertsImpl(ExpertsOptions options)
    : options_(std::move(options)),
      held_(options_.placement.expert_parallel
                ? layers::local_count(options_.experts, options_.placement.expert_parallel->size(),
                                      "the experts")
                : options_.experts),
      width_(options_.placement.share_of(options_.intermediate, "the expert width")) {
  if (options_.mxfp4 && (width_ % mxfp4::kBlock != 0 || options_.hidden % mxfp4::kBlock != 0)) {
    throw std::logic_error("MXFP4 experts need widths in whole blocks of 32");
  }
  const int64_t e = held_, h = options_.hidden, i = width_;
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
  const int64_t e = held_, h = options_.hidden, i = width_;
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
  const torch::Tensor down_bias =
      options_.placement.tensor_parallel ? torch::Tensor() : down_proj_bias[expert];
  const torch::Tensor out = torch::linear(
      options_.activation(gate_up), weight_of(down_proj, down_mxfp4_, expert, dtype), down_bias);
  FlopCounter::record_multiply_adds(rows.size(0) * 3 * options_.hidden * width_,
                                    mxfp4() || !gate_up_proj.requires_grad());
  return out;
}

torch::Tensor ExpertsImpl::held_outputs(const torch::Tensor& rows, const torch::Tensor& counts) {
  const torch::Tensor on_host = counts.to(torch::kCPU, torch::kLong).contiguous();
  const int64_t* per_expert = on_host.data_ptr<int64_t>();
  std::vector<torch::Tensor> outputs;
  int64_t first = 0;
  for (int64_t expert = 0; expert < held_; ++expert) {
    if (per_expert[expert] == 0) continue;
    outputs.push_back(expert_output(expert, rows.narrow(0, first, per_expert[expert])));
    first += per_expert[expert];
  }
  if (outputs.empty()) return torch::zeros({0, options_.hidden}, rows.options());
  return outputs.size() == 1 ? outputs.front() : torch::cat(outputs);
}

// GShard's dispatch and combine: the rows, sorted by expert, go to their experts' ranks in
// contiguous chunks (each rank's experts have neighbouring ids); each rank groups what it
// received by expert, computes, restores the received order and sends the outputs back the way
// they came.
torch::Tensor ExpertsImpl::exchanged_outputs(const torch::Tensor& rows,
                                             const torch::Tensor& experts) {
  layers::ExpertParallelGroup& group = *options_.placement.expert_parallel;
  const torch::Tensor rank_of = experts.div(held_, "floor");
  const torch::Tensor sent_per_rank = torch::bincount(rank_of, {}, group.size()).to(torch::kCPU);
  const std::vector<int64_t> send(sent_per_rank.data_ptr<int64_t>(),
                                  sent_per_rank.data_ptr<int64_t>() + group.size());
  const std::vector<int64_t> receive = group.receive_counts(send, rows.device());
  const torch::Tensor arrived = group.exchange(rows, send, receive);
  const torch::Tensor held_expert = group.exchange(experts - rank_of * held_, send, receive);
  const torch::Tensor order = std::get<1>(held_expert.sort(/*stable=*/true, 0, false));
  const torch::Tensor grouped =
      held_outputs(arrived.index_select(0, order), torch::bincount(held_expert, {}, held_));
  const torch::Tensor outputs = torch::zeros_like(grouped).index_copy(0, order, grouped);
  return group.exchange(outputs, receive, send);
}

torch::Tensor ExpertsImpl::forward(const torch::Tensor& tokens, const Routes& routes) {
  layers::TensorParallelGroup* const sliced = options_.placement.tensor_parallel;
  const auto copied = [sliced](const torch::Tensor& t) {
    return sliced ? sliced->copy_to_group(t) : t;
  };
  const int64_t n = tokens.size(0), k = routes.experts.size(1);
  const torch::Tensor chosen = routes.experts.reshape({-1});
  const torch::Tensor per_expert = torch::bincount(chosen, {}, options_.experts);
  load_.add(per_expert);
  // The routes in expert order (stable: a token's rows keep their order within an expert).
  const torch::Tensor order = std::get<1>(chosen.sort(/*stable=*/true, 0, false));
  const torch::Tensor token_of = order.div(k, "floor");
  const torch::Tensor rows = copied(tokens).index_select(0, token_of);
  // Without expert parallelism this module holds every expert: the counts are its groups'.
  const torch::Tensor outputs = options_.placement.expert_parallel
                                    ? exchanged_outputs(rows, chosen.index_select(0, order))
                                    : held_outputs(rows, per_expert);
  // Under tensor parallelism each rank's outputs are partial sums, and the router's weights
  // scale each part: their gradient is summed over the group.
  const torch::Tensor weights = copied(routes.weights.reshape({-1})).index_select(0, order);
  const torch::Tensor summed = torch::zeros_like(tokens).index_add(
      0, token_of, (outputs * weights.unsqueeze(1)).to(tokens.scalar_type()));
  if (!sliced) return summed;
  const torch::Tensor down_bias =
      (routes.weights.unsqueeze(-1) * down_proj_bias.index_select(0, chosen).view({n, k, -1}))
          .sum(1);
  return sliced->reduce_from_group(summed) + down_bias.to(tokens.scalar_type());
}

void ExpertsImpl::quantize_mxfp4() {
  if (mxfp4()) return;
  torch::NoGradGuard no_grad;
  hold_in_mxfp4(gate_up_proj.device());
  for (int64_t expert = 0; expert < held_; ++expert) {
    quantize_into(*gate_up_mxfp4_, expert, gate_up_proj[expert]);
    quantize_into(*down_mxfp4_, expert, down_proj[expert]);
  }
  for (torch::Tensor* weight : {&gate_up_proj, &down_proj}) {
    weight->set_data(torch::empty({0}, weight->options()));
  }
}

bool ExpertsImpl::hold_weight_in(const layers::WeightFormat& format) {
  if (!format.holds_experts_in_mxfp4()) return false;
  quantize_mxfp4();
  return true;
}

std::vector<torch::Tensor> expert_parameters(torch::nn::Module& module) {
  std::vector<torch::Tensor> found;
  for (const auto& child : module.modules()) {
    if (auto* experts = dynamic_cast<ExpertsImpl*>(child.get())) {
      for (const torch::Tensor& parameter : experts->parameters(/*recurse=*/false)) {
        found.push_back(parameter);
      }
    }
  }
  return found;
}

}  // namespace gpubench::moe
