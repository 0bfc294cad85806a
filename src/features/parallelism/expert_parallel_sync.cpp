#include "features/parallelism/expert_parallel_sync.h"

#include <algorithm>
#include <set>

#include "modeling/mixture_of_experts.h"

namespace gpubench {

ExpertParallelSync::ExpertParallelSync(Collectives& world, Collectives& expert_replicas,
                                       int expert_parallel, torch::nn::Module& module,
                                       const std::vector<torch::Tensor>& trainable,
                                       int64_t bucket_bytes)
    : world_(world), expert_scale_(1.0 / expert_parallel) {
  std::set<const void*> of_experts;
  for (const torch::Tensor& parameter : moe::expert_parameters(module)) {
    of_experts.insert(parameter.unsafeGetTensorImpl());
  }
  std::vector<torch::Tensor> shared;
  for (const torch::Tensor& parameter : trainable) {
    (of_experts.count(parameter.unsafeGetTensorImpl()) ? expert_parameters_ : shared)
        .push_back(parameter);
  }
  shared_ = std::make_unique<GradientSynchronizer>(world, shared, bucket_bytes);
  if (!expert_parameters_.empty() && expert_replicas.world_size() > 1) {
    experts_ =
        std::make_unique<GradientSynchronizer>(expert_replicas, expert_parameters_, bucket_bytes);
  }
}

void ExpertParallelSync::finish_step() {
  shared_->finish_step();
  if (experts_) experts_->finish_step();
  torch::NoGradGuard no_grad;
  for (torch::Tensor& parameter : expert_parameters_) {
    if (parameter.grad().defined()) parameter.mutable_grad().mul_(expert_scale_);
  }
}

void ExpertParallelSync::agree_on_found_inf(torch::Tensor& found_inf) {
  world_.allreduce_max(found_inf).wait();
}

int ExpertParallelSync::bucket_count() const {
  return shared_->bucket_count() + (experts_ ? experts_->bucket_count() : 0);
}

int64_t ExpertParallelSync::gradient_bytes() const {
  return shared_->gradient_bytes() + (experts_ ? experts_->gradient_bytes() : 0);
}

std::vector<double> ExpertParallelSync::take_exposed_communication_ms() {
  std::vector<double> exposed = shared_->take_exposed_communication_ms();
  if (!experts_) return exposed;
  const std::vector<double> more = experts_->take_exposed_communication_ms();
  exposed.resize(std::max(exposed.size(), more.size()), 0.0);
  for (size_t i = 0; i < more.size(); ++i) exposed[i] += more[i];
  return exposed;
}

}  // namespace gpubench
