#include "modeling/tensor_parallel.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace gpubench::tensor_parallel {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

Group* group_of(AutogradContext* context) {
  return reinterpret_cast<Group*>(context->saved_data["group"].toInt());
}

void remember(AutogradContext* context, Group* group) {
  context->saved_data["group"] = reinterpret_cast<int64_t>(group);
}

Tensor summed(const Tensor& input, Group* group) {
  Tensor sum = input.clone();
  group->allreduce_sum(sum);
  return sum;
}

struct CopyToGroup : torch::autograd::Function<CopyToGroup> {
  static Tensor forward(AutogradContext* context, const Tensor& input, Group* group) {
    remember(context, group);
    return input;
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    return {summed(gradients[0], group_of(context)), Tensor()};
  }
};

struct ReduceFromGroup : torch::autograd::Function<ReduceFromGroup> {
  static Tensor forward(AutogradContext*, const Tensor& input, Group* group) {
    return summed(input, group);
  }
  static variable_list backward(AutogradContext*, variable_list gradients) {
    return {gradients[0], Tensor()};
  }
};

bool records_gradient(const Tensor& input) {
  return torch::GradMode::is_enabled() && input.requires_grad();
}

// Where this rank's slice of `count` rows starts.
int64_t slice_start(const Tensor& local_weight_or_logits, int64_t dim, const Group& group) {
  return group.rank() * local_weight_or_logits.size(dim);
}

class OneRankAlone : public Group {
 public:
  explicit OneRankAlone(int size) : size_(size) {}
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

}  // namespace

Group* one_rank_alone(int size) {
  if (size <= 1) return nullptr;
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<OneRankAlone>> groups;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& group = groups[size];
  if (!group) group = std::make_unique<OneRankAlone>(size);
  return group.get();
}

int64_t local_count(int64_t count, const Group* group, const std::string& what) {
  if (group == nullptr) return count;
  if (count % group->size() != 0) {
    throw std::logic_error(std::to_string(group->size()) + " tensor-parallel ranks do not divide " +
                           what + " (" + std::to_string(count) + ")");
  }
  return count / group->size();
}

Tensor copy_to_group(const Tensor& input, Group* group) {
  if (group == nullptr || !records_gradient(input)) return input;
  // The copy itself is a view that its readers' views outlive (a view of a view is a view of
  // the base), so its node stands for it: the same input, differentiable through the same node.
  if (group->last_input_ && group->last_input_->lock().get() == input.unsafeGetTensorImpl()) {
    if (std::shared_ptr<torch::autograd::Node> node = group->last_copy_node_.lock()) {
      Tensor copy = input.detach();
      torch::autograd::impl::set_gradient_edge(copy, {std::move(node), 0});
      return copy;
    }
  }
  Tensor copy = CopyToGroup::apply(input, group);
  group->last_input_.emplace(input.getIntrusivePtr());
  group->last_copy_node_ = copy.grad_fn();
  return copy;
}

Tensor reduce_from_group(const Tensor& input, Group* group) {
  if (group == nullptr) return input;
  if (records_gradient(input)) return ReduceFromGroup::apply(input, group);
  // Outside autograd the callers' inputs are temporaries (a row-parallel product, masked rows):
  // reduced in place, as Megatron does, with no copy per decoded token.
  Tensor reduced = input;
  group->allreduce_sum(reduced);
  return reduced;
}

Tensor gather_vocabulary(const Tensor& local_logits, Group* group) {
  if (group == nullptr) return local_logits;
  return group->allgather_last_dim(local_logits.contiguous());
}

Tensor embed(const Tensor& tokens, const Tensor& weight, Group* group) {
  if (group == nullptr) return torch::embedding(weight, tokens);
  const Tensor local = tokens - slice_start(weight, 0, *group);
  const Tensor outside = (local < 0) | (local >= weight.size(0));
  const Tensor rows = torch::embedding(weight, local.masked_fill(outside, 0));
  return reduce_from_group(rows.masked_fill(outside.unsqueeze(-1), 0), group);
}

Tensor cross_entropy(const Tensor& local_logits, const Tensor& targets, Group* group) {
  if (group == nullptr) return torch::cross_entropy_loss(local_logits, targets);
  Tensor largest = std::get<0>(local_logits.detach().max(-1)).contiguous();
  group->allreduce_max(largest);
  const Tensor shifted = local_logits - largest.unsqueeze(-1);
  const Tensor exponentials = reduce_from_group(shifted.exp().sum(-1), group);
  const Tensor local = targets - slice_start(local_logits, -1, *group);
  const Tensor outside = (local < 0) | (local >= local_logits.size(-1));
  const Tensor picked = shifted.gather(-1, local.masked_fill(outside, 0).unsqueeze(-1))
                            .squeeze(-1)
                            .masked_fill(outside, 0);
  const Tensor target_logit = reduce_from_group(picked, group);
  return (exponentials.log() - target_logit).mean();
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

}  // namespace gpubench::tensor_parallel
