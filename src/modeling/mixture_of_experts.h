// The building blocks of a mixture-of-experts layer (docs/models.md#mixture-of-experts): a top-k
// router, a bank of experts that each token visits k of, and the count of tokens each expert
// took. gpt-oss builds its MLP from them (models/gpt_oss.cpp); another MoE shape is one file.
//
// Every routed token is computed: no capacity factor, so no token is dropped. Tokens are grouped
// by expert (a stable sort of the routes), each expert that has tokens computes its two products
// on its rows, and the outputs, weighted by the router, are added back to their tokens in expert
// order (Hugging Face's GptOssExperts loop, whose sums this order reproduces). Under tensor or
// expert parallelism (ExpertsOptions) the same sums come out of the group.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <torch/torch.h>

#include "modeling/layer_placement.h"
#include "modeling/linear_compute.h"
#include "modeling/mxfp4_weights.h"

namespace gpubench::moe {

// Each token's k chosen experts and their weights, [tokens, k] each.
struct Routes {
  torch::Tensor experts;  // long
  torch::Tensor weights;  // the router's dtype
};

// Hugging Face's GptOssTopKRouter: logits = x W^T + b over the experts, the k largest, softmax
// over those k.
class TopKRouterImpl : public torch::nn::Module {
 public:
  // `balanced` (fit's training probes: ModelOptions::balanced_routes): token t's k routes go to
  // experts t k to t k + k - 1 modulo their count, weighted by the softmax of its logits there, so
  // that a probe's tokens visit every expert once they have as many routes, and the same ones at
  // every width (a run's thousands of tokens visit them all).
  TopKRouterImpl(int64_t hidden, int64_t experts, int64_t top_k, bool balanced = false);
  Routes forward(const torch::Tensor& tokens);  // tokens [n, hidden]
  int64_t top_k() const { return top_k_; }

  torch::Tensor weight, bias;

 private:
  int64_t top_k_;
  bool balanced_;
};
TORCH_MODULE(TopKRouter);

// What an expert computes between its two products, from the first product's [rows, 2 x
// intermediate] to [rows, intermediate].
using ExpertActivation = std::function<torch::Tensor(const torch::Tensor&)>;

// Tokens each expert took since the last reset, counted on the device (no synchronisation).
class ExpertLoad {
 public:
  void add(const torch::Tensor& routes_per_expert);  // long [experts]
  void reset() { counts_ = torch::Tensor(); }
  // Per expert; empty before any forward pass.
  std::vector<int64_t> tokens_per_expert() const;

 private:
  torch::Tensor counts_;
};

struct ExpertsOptions {
  int64_t experts = 0;  // the layer's, over all ranks
  int64_t hidden = 0;
  int64_t intermediate = 0;  // each expert's, whole
  ExpertActivation activation;
  // The weights in MXFP4 from construction (inference): no float weights at all.
  bool mxfp4 = false;
  // Where the experts lie (modeling/layer_placement.h). Over a tensor-parallel group, each
  // expert's intermediate dimension is split (contiguous slices of gate_up's rows, whose gate and
  // up columns interleave in pairs, and of down's columns); the partial outputs are summed over
  // the group and down's bias added after the sum. Over an expert-parallel group
  // (features/parallelism/expert_parallel.h): whole experts on each rank, rank r holding experts
  // r x experts / size onwards; the routed tokens travel to their experts' ranks and back.
  layers::LayerPlacement placement = {};
};

// The experts' weights, [experts, out, in] as the linear layers' and the released checkpoints'
// (gate_up_proj [E, 2 x intermediate, hidden], down_proj [E, hidden, intermediate]), with
// biases; in the precision's dtype, or in MXFP4 for inference (quantize_mxfp4).
class ExpertsImpl : public torch::nn::Module, public layers::QuantizableLinear {
 public:
  explicit ExpertsImpl(ExpertsOptions options);
  // tokens [n, hidden] with their routes (over all the layer's experts): [n, hidden], the weighted
  // sum of their experts' outputs.
  torch::Tensor forward(const torch::Tensor& tokens, const Routes& routes);

  // Inference: the two weights in MXFP4 (buffers gate_up_proj_blocks, _scales, down_proj_blocks,
  // _scales), their float storage freed; each product dequantises its expert's weight to the
  // tokens' dtype. Quantised one expert at a time, so the temporaries stay an expert's size.
  void quantize_mxfp4();
  // Built in MXFP4: synthetic weights drawn as the bytes themselves, where the buffers are: codes
  // uniform over the 16 e2m1 values, every block's scale the power of two that gives them an rms
  // near `std` (at memory speed: quantising drawn normal weights took minutes a model on a CPU).
  void initialize_mxfp4(double std);
  // MXFP4 where the format asks for it; the other formats leave the experts as they are.
  bool hold_weight_in(const layers::WeightFormat& format) override;
  // MXFP4 runs on every build: quantised, never counted.
  int64_t bytes_change_in(const layers::WeightFormat&) const override { return 0; }
  bool mxfp4() const { return gate_up_mxfp4_.has_value(); }

  ExpertLoad& load() { return load_; }
  const ExpertsOptions& options() const { return options_; }
  int64_t held_experts() const { return held_; }

  torch::Tensor gate_up_proj, gate_up_proj_bias, down_proj, down_proj_bias;

 private:
  // Registers the two weights' MXFP4 buffers on `device`, undrawn.
  void hold_in_mxfp4(torch::Device device);
  // One held expert's output for its rows (without down's bias under tensor parallelism).
  torch::Tensor expert_output(int64_t expert, const torch::Tensor& rows);
  // Rows grouped by held expert (`experts` ascending, `counts` per held expert, on the host):
  // each group's outputs, in the rows' order.
  torch::Tensor held_outputs(const torch::Tensor& rows, const torch::Tensor& counts);
  // Expert parallelism: rows sorted by their experts (global ids) sent to their experts' ranks,
  // computed there, and sent back; the outputs in the rows' order.
  torch::Tensor exchanged_outputs(const torch::Tensor& rows, const torch::Tensor& experts);
  torch::Tensor weight_of(const torch::Tensor& weight, const std::optional<mxfp4::Mxfp4Weight>& q,
                          int64_t expert, torch::ScalarType dtype) const;

  ExpertsOptions options_;
  int64_t held_;   // experts on this rank (neighbouring ids)
  int64_t width_;  // this rank's slice of each expert's intermediate dimension
  std::optional<mxfp4::Mxfp4Weight> gate_up_mxfp4_, down_mxfp4_;
  ExpertLoad load_;
};
TORCH_MODULE(Experts);

// The parameters of every Experts module in `module` (what expert parallelism does not
// replicate).
std::vector<torch::Tensor> expert_parameters(torch::nn::Module& module);

}  // namespace gpubench::moe
