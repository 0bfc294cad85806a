#include "distributed/gradient_synchronizer.h"

namespace gpubench {

GradientSynchronizer::GradientSynchronizer(Collectives& collectives,
                                           std::vector<torch::Tensor> parameters,
                                           int64_t bucket_bytes)
    : collectives_(collectives), exposed_(collectives.device()) {
  const GradientBuckets layout = assign_gradient_buckets(parameters, bucket_bytes);
  gradient_bytes_ = layout.total_bytes();
  for (size_t p = 0; p < layout.parameters.size(); ++p) {
    slots_.push_back({layout.parameters[p], layout.bucket_of[p], {}, false, 0});
  }
  buckets_.resize(layout.members.size());
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const std::vector<size_t>& members = layout.members[b];
    int64_t numel = 0;
    for (size_t s : members) numel += slots_[s].parameter.numel();
    const auto& first = slots_[members.front()].parameter;
    buckets_[b].buffer = torch::zeros({numel}, first.options().requires_grad(false));
    buckets_[b].size = members.size();
    buckets_[b].waiting = members.size();
    int64_t offset = 0;
    for (size_t s : members) {
      auto& slot = slots_[s];
      slot.view =
          buckets_[b].buffer.narrow(0, offset, slot.parameter.numel()).view(slot.parameter.sizes());
      offset += slot.parameter.numel();
    }
  }
  for (size_t s = 0; s < slots_.size(); ++s) {
    slots_[s].hook = slots_[s].parameter.register_hook(
        [this, s](const torch::Tensor& gradient) { on_gradient(s, gradient); });
  }
}

GradientSynchronizer::~GradientSynchronizer() {
  for (auto& slot : slots_) slot.parameter.remove_hook(slot.hook);
}

void GradientSynchronizer::on_gradient(size_t slot, const torch::Tensor& gradient) {
  std::lock_guard<std::mutex> lock(mutex_);
  torch::NoGradGuard no_grad;
  slots_[slot].view.copy_(gradient);
  mark_ready(slot);
  launch_ready_buckets();
}

void GradientSynchronizer::mark_ready(size_t slot) {
  if (slots_[slot].ready) return;
  slots_[slot].ready = true;
  --buckets_[slots_[slot].bucket].waiting;
}

void GradientSynchronizer::launch_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].waiting == 0) {
    auto& buffer = buckets_[next_bucket_].buffer;
    buffer.div_(collectives_.world_size());
    pending_.push_back(collectives_.allreduce_sum(buffer));
    ++next_bucket_;
  }
}

void GradientSynchronizer::finish_step() {
  std::lock_guard<std::mutex> lock(mutex_);
  torch::NoGradGuard no_grad;
  exposed_.begin();
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (!slots_[s].ready) {
      slots_[s].view.zero_();
      mark_ready(s);
    }
  }
  launch_ready_buckets();
  for (auto& pending : pending_) pending.wait();
  exposed_.end();
  pending_.clear();
  next_bucket_ = 0;
  for (auto& bucket : buckets_) bucket.waiting = bucket.size;
  for (auto& slot : slots_) {
    slot.ready = false;
    auto& grad = slot.parameter.mutable_grad();
    if (grad.defined()) {
      grad.copy_(slot.view);
    } else {
      grad = slot.view.clone();
    }
  }
}

}  // namespace gpubench
