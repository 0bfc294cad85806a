// Where a rank's share of a model's layers lies: the groups its layers are split over
// (modeling/layer_groups.h, implemented by features/parallelism/), handed to a model in
// ModelOptions. A model builds its projections and its token embedding through the functions
// below, by role, and takes its vocabulary's logits and loss through them; it never names a
// split. Which side of a projection a rank holds is the group's to say by the projection's role
// (TensorParallelGroup::split_of), each layer communicating its own way (AdaptedLinearImpl).
// Without groups, a rank holds every layer whole and every function is the plain layer's.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "modeling/adapted_linear.h"
#include "modeling/layer_groups.h"
#include "modeling/linear_compute.h"

namespace gpubench::layers {

struct LayerPlacement {
  // --tensor-parallel N: the group the layers are sharded over; null: whole on this rank.
  TensorParallelGroup* tensor_parallel = nullptr;
  // --expert-parallel N: the group a mixture of experts' experts are spread over; null: every
  // rank holds them all.
  ExpertParallelGroup* expert_parallel = nullptr;

  // The ranks of the tensor-parallel group; 1 without one.
  int tensor_parallel_ranks() const { return tensor_parallel ? tensor_parallel->size() : 1; }
  // This rank's share of `count` sharded heads or rows (`what` names them where the group does
  // not divide them, which resolve refuses first: std::logic_error).
  int64_t share_of(int64_t count, const std::string& what) const;
};

// A projection [out, in] of `role`, holding this rank's slice as its role says.
AdaptedLinear projection(int64_t in, int64_t out, bool bias, const std::string& role,
                         const LayerPlacement& placement);

// A grouped-query attention's projections as Hugging Face's Llama family names them (q_proj,
// k_proj, v_proj and o_proj, registered on `attention`), and the heads this rank's q and k hold.
struct AttentionProjections {
  AdaptedLinear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  int64_t heads = 0, kv_heads = 0;

  // q, k and v of x [batch, tokens, hidden] as [batch, heads, tokens, head_dim]: one product
  // where their weights are stacked (modeling/shared_input_products.h).
  std::array<torch::Tensor, 3> heads_of(const torch::Tensor& x, int64_t head_dim) const;
};
AttentionProjections attention_projections(torch::nn::Module& attention, int64_t hidden,
                                           int64_t heads, int64_t kv_heads, int64_t head_dim,
                                           bool bias, const LayerPlacement& placement);

// A token embedding [vocab, width], left uninitialised for the model to draw; over a group,
// this rank's rows of the vocabulary (rank x vocab / size onwards).
class TokenEmbeddingImpl : public torch::nn::Module {
 public:
  TokenEmbeddingImpl(int64_t vocab, int64_t width, const LayerPlacement& placement);
  torch::Tensor forward(const torch::Tensor& tokens);
  // The logits of this rank's slice of the vocabulary through the embedding's own weight (a
  // tied head, as Hugging Face's lm_head is): a linear layer all the same (FP8 where the run
  // says so).
  torch::Tensor tied_logits(const torch::Tensor& hidden);

  torch::Tensor weight;

 private:
  TensorParallelGroup* group_;
  LinearCompute tied_head_;
};
TORCH_MODULE(TokenEmbedding);

// Logits [..., vocab / size] of this rank's slice gathered to the whole vocabulary (inference:
// no gradient flows back through it).
torch::Tensor whole_vocabulary(const torch::Tensor& local_logits, const LayerPlacement& placement);

// The mean over rows of -log softmax(logits)[target], from this rank's slice of the logits
// [rows, vocab / size] (float32), without gathering them (TensorParallelGroup::cross_entropy).
torch::Tensor vocabulary_cross_entropy(const torch::Tensor& local_logits,
                                       const torch::Tensor& targets,
                                       const LayerPlacement& placement);

}  // namespace gpubench::layers
