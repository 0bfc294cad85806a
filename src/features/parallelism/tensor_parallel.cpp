#include "features/parallelism/tensor_parallel.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "modeling/adapted_linear.h"

namespace gpubench::parallelism {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

LayerCollectives* collectives_of(AutogradContext* context) {
  return reinterpret_cast<LayerCollectives*>(context->saved_data["collectives"].toInt());
}

void remember(AutogradContext* context, LayerCollectives* collectives) {
  context->saved_data["collectives"] = reinterpret_cast<int64_t>(collectives);
}

Tensor summed_over(const Tensor& input, LayerCollectives& collectives) {
  Tensor sum = input.clone();
  collectives.allreduce_sum(sum);
  return sum;
}

struct CopyToGroup : torch::autograd::Function<CopyToGroup> {
  static Tensor forward(AutogradContext* context, const Tensor& input,
                        LayerCollectives* collectives) {
    remember(context, collectives);
    return input;
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    return {summed_over(gradients[0], *collectives_of(context)), Tensor()};
  }
};

struct ReduceFromGroup : torch::autograd::Function<ReduceFromGroup> {
  static Tensor forward(AutogradContext*, const Tensor& input, LayerCollectives* collectives) {
    return summed_over(input, *collectives);
  }
  static variable_list backward(AutogradContext*, variable_list gradients) {
    return {gradients[0], Tensor()};
  }
};

bool records_gradient(const Tensor& input) {
  return torch::GradMode::is_enabled() && input.requires_grad();
}

// Where this rank's slice of `count` rows starts.
int64_t slice_start(const Tensor& local_weight_or_logits, int64_t dim, int rank) {
  return rank * local_weight_or_logits.size(dim);
}

class NoPeers : public LayerCollectives {
 public:
  explicit NoPeers(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  void allreduce_sum(Tensor&) override {}
  void allreduce_max(Tensor&) override {}
  Tensor allgather_last_dim(const Tensor& tensor) override {
    return torch::cat(std::vector<Tensor>(static_cast<size_t>(size_), tensor), -1);
  }
  // Its peers' rows are not there to receive; fit, which probes with it, takes no expert
  // parallelism.
  Tensor all_to_all(const Tensor&, const std::vector<int64_t>&,
                    const std::vector<int64_t>&) override {
    throw std::logic_error("a lone rank has no peers to exchange rows with");
  }

 private:
  int size_;
};

struct OneRankAlone {
  explicit OneRankAlone(int size) : collectives(size), layers(collectives) {}
  NoPeers collectives;
  TensorParallelLayers layers;
};

}  // namespace

layers::Split split_of(const std::string& role) {
  if (role == "q" || role == "k" || role == "v" || role == "gate" || role == "up" ||
      role == layers::kVocabularyHeadRole) {
    return layers::Split::kColumns;
  }
  if (role == "o" || role == "down") return layers::Split::kRows;
  throw std::logic_error("no tensor-parallel split for a projection of role '" + role + "'");
}

std::array<int64_t, 2> weight_slice(int64_t out, int64_t in, const std::string& role,
                                    int64_t ranks) {
  const layers::Split split = role.empty() ? layers::Split::kNone : split_of(role);
  return {split == layers::Split::kColumns ? out / ranks : out,
          split == layers::Split::kRows ? in / ranks : in};
}

layers::Split TensorParallelLayers::split_of(const std::string& role) const {
  return parallelism::split_of(role);
}

layers::TensorParallelGroup* one_rank_alone(int size) {
  if (size <= 1) return nullptr;
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<OneRankAlone>> groups;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& group = groups[size];
  if (!group) group = std::make_unique<OneRankAlone>(size);
  return &group->layers;
}

Tensor TensorParallelLayers::copy_to_group(const Tensor& input) {
  if (!records_gradient(input)) return input;
  // The copy itself is a view that its readers' views outlive (a view of a view is a view of
  // the base), so its node stands for it: the same input, differentiable through the same node.
  if (last_input_ && last_input_->lock().get() == input.unsafeGetTensorImpl()) {
    if (std::shared_ptr<torch::autograd::Node> node = last_copy_node_.lock()) {
      Tensor copy = input.detach();
      torch::autograd::impl::set_gradient_edge(copy, {std::move(node), 0});
      return copy;
    }
  }
  Tensor copy = CopyToGroup::apply(input, &collectives_);
  last_input_.emplace(input.getIntrusivePtr());
  last_copy_node_ = copy.grad_fn();
  return copy;
}

Tensor TensorParallelLayers::reduce_from_group(const Tensor& input) {
  if (records_gradient(input)) return ReduceFromGroup::apply(input, &collectives_);
  // Outside autograd the callers' inputs are temporaries (a row-parallel product, masked rows):
  // reduced in place, as Megatron does, with no copy per decoded token.
  Tensor reduced = input;
  collectives_.allreduce_sum(reduced);
  return reduced;
}

Tensor TensorParallelLayers::gather_vocabulary(const Tensor& local_logits) {
  return collectives_.allgather_last_dim(local_logits.contiguous());
}

Tensor TensorParallelLayers::embed(const Tensor& tokens, const Tensor& weight) {
  const Tensor local = tokens - slice_start(weight, 0, rank());
  const Tensor outside = (local < 0) | (local >= weight.size(0));
  const Tensor rows = torch::embedding(weight, local.masked_fill(outside, 0));
  return reduce_from_group(rows.masked_fill(outside.unsqueeze(-1), 0));
}

Tensor TensorParallelLayers::cross_entropy(const Tensor& local_logits, const Tensor& targets) {
  Tensor largest = std::get<0>(local_logits.detach().max(-1)).contiguous();
  collectives_.allreduce_max(largest);
  const Tensor shifted = local_logits - largest.unsqueeze(-1);
  const Tensor exponentials = reduce_from_group(shifted.exp().sum(-1));
  const Tensor local = targets - slice_start(local_logits, -1, rank());
  const Tensor outside = (local < 0) | (local >= local_logits.size(-1));
  const Tensor picked = shifted.gather(-1, local.masked_fill(outside, 0).unsqueeze(-1))
                            .squeeze(-1)
                            .masked_fill(outside, 0);
  const Tensor target_logit = reduce_from_group(picked);
  return (exponentials.log() - target_logit).mean();
}

Tensor TensorParallelLayers::summed(const Tensor& part) {
  return summed_over(part, collectives_);
}

void copy_shard(const Tensor& full, Tensor& local, int rank, int size) {
  torch::NoGradGuard no_grad;
  if (full.sizes() == local.sizes()) {
    local.copy_(full);
    return;
  }
  int64_t split = -1;
  for (int64_t d = 0; d < full.dim() && full.dim() == local.dim(); ++d) {
    if (full.size(d) == local.size(d)) continue;
    if (split >= 0 || local.size(d) * size != full.size(d)) split = -2;
    if (split == -1) split = d;
  }
  if (split < 0) {
    throw std::logic_error("no slice of a " + c10::str(full.sizes()) + " tensor over " +
                           std::to_string(size) + " ranks is " + c10::str(local.sizes()));
  }
  local.copy_(full.narrow(split, rank * local.size(split), local.size(split)));
}

}  // namespace gpubench::parallelism
