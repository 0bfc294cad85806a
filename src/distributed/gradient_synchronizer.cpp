#include "distributed/gradient_synchronizer.h"

#include <set>

namespace gpubench {

GradientSynchronizer::GradientSynchronizer(Collectives& collectives,
                                           std::vector<torch::Tensor> parameters,
                                           int64_t bucket_bytes)
    : collectives_(collectives), exposed_(collectives.device()) {
  std::vector<std::vector<size_t>> members;
  std::set<const void*> seen;  // a tensor listed twice (tied weights) is reduced once
  int64_t filled = 0;
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    if (!it->requires_grad() || !seen.insert(it->unsafeGetTensorImpl()).second) continue;
    const int64_t bytes = it->numel() * static_cast<int64_t>(it->element_size());
    // The cap of the bucket being filled: the first one closes early so that communication
    // starts soon after backward does.
    const int64_t cap =
        members.size() == 1 ? std::min(kFirstBucketBytes, bucket_bytes) : bucket_bytes;
    const bool new_bucket =
        members.empty() || filled >= cap ||
        slots_[members.back().front()].parameter.scalar_type() != it->scalar_type();
    if (new_bucket) {
      members.emplace_back();
      buckets_.emplace_back();
      filled = 0;
    }
    members.back().push_back(slots_.size());
    slots_.push_back({*it, buckets_.size() - 1, {}, false, 0});
    filled += bytes;
    gradient_bytes_ += bytes;
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    int64_t numel = 0;
    for (size_t s : members[b]) numel += slots_[s].parameter.numel();
    const auto& first = slots_[members[b].front()].parameter;
    buckets_[b].buffer = torch::zeros({numel}, first.options().requires_grad(false));
    buckets_[b].size = members[b].size();
    buckets_[b].waiting = members[b].size();
    int64_t offset = 0;
    for (size_t s : members[b]) {
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
