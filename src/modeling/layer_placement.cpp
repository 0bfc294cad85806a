#include "modeling/layer_placement.h"

#include <stdexcept>
#include <vector>

#include "modeling/shared_input_products.h"

namespace gpubench::layers {

int64_t local_count(int64_t count, int ranks, const std::string& what) {
  if (count % ranks != 0) {
    throw std::logic_error(std::to_string(ranks) + " ranks do not divide " + what + " (" +
                           std::to_string(count) + ")");
  }
  return count / ranks;
}

int64_t LayerPlacement::share_of(int64_t count, const std::string& what) const {
  return local_count(count, tensor_parallel_ranks(), what);
}

AdaptedLinear projection(int64_t in, int64_t out, bool bias, const std::string& role,
                         const LayerPlacement& placement) {
  TensorParallelGroup* group = placement.tensor_parallel;
  return AdaptedLinear(in, out, bias, role, group ? group->split_of(role) : Split::kNone, group);
}

AttentionProjections attention_projections(torch::nn::Module& attention, int64_t hidden,
                                           int64_t heads, int64_t kv_heads, int64_t head_dim,
                                           bool bias, const LayerPlacement& placement) {
  const auto add = [&](const char* name, int64_t in, int64_t out, const char* role) {
    return attention.register_module(name, projection(in, out, bias, role, placement));
  };
  AttentionProjections built;
  built.q = add("q_proj", hidden, heads * head_dim, "q");
  built.k = add("k_proj", hidden, kv_heads * head_dim, "k");
  built.v = add("v_proj", hidden, kv_heads * head_dim, "v");
  built.o = add("o_proj", heads * head_dim, hidden, "o");
  built.heads = built.q->out_features() / head_dim;
  built.kv_heads = built.k->out_features() / head_dim;
  return built;
}

std::array<torch::Tensor, 3> AttentionProjections::heads_of(const torch::Tensor& x,
                                                            int64_t head_dim) const {
  const int64_t batch = x.size(0), tokens = x.size(1);
  const std::vector<torch::Tensor> projected = project_together(x, {q, k, v});
  const auto split = [&](const torch::Tensor& t, int64_t count) {
    return t.view({batch, tokens, count, head_dim}).transpose(1, 2);
  };
  return {split(projected[0], heads), split(projected[1], kv_heads), split(projected[2], kv_heads)};
}

TokenEmbeddingImpl::TokenEmbeddingImpl(int64_t vocab, int64_t width,
                                       const LayerPlacement& placement)
    : group_(placement.tensor_parallel) {
  weight = register_parameter("weight",
                              torch::empty({placement.share_of(vocab, "the vocabulary"), width}));
}

torch::Tensor TokenEmbeddingImpl::forward(const torch::Tensor& tokens) {
  return group_ ? group_->embed(tokens, weight) : torch::embedding(weight, tokens);
}

torch::Tensor TokenEmbeddingImpl::tied_logits(const torch::Tensor& hidden) {
  return tied_head_.forward(group_ ? group_->copy_to_group(hidden) : hidden, weight, {});
}

torch::Tensor whole_vocabulary(const torch::Tensor& local_logits, const LayerPlacement& placement) {
  TensorParallelGroup* group = placement.tensor_parallel;
  return group ? group->gather_vocabulary(local_logits) : local_logits;
}

torch::Tensor vocabulary_cross_entropy(const torch::Tensor& local_logits,
                                       const torch::Tensor& targets,
                                       const LayerPlacement& placement) {
  TensorParallelGroup* group = placement.tensor_parallel;
  return group ? group->cross_entropy(local_logits, targets)
               : torch::cross_entropy_loss(local_logits, targets);
}

}  // namespace gpubench::layers
