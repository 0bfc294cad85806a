#include "memory/training_memory.h"

#include <set>

namespace gpubench {

int64_t storage_bytes(const std::vector<torch::Tensor>& tensors) {
  std::set<const void*> seen;
  int64_t bytes = 0;
  for (const torch::Tensor& tensor : tensors) {
    if (!tensor.defined()) continue;
    const c10::Storage& storage = tensor.storage();
    if (!seen.insert(storage.unsafeGetStorageImpl()).second) continue;
    bytes += static_cast<int64_t>(storage.nbytes());
  }
  return bytes;
}

MemoryBreakdown counted_training_state(torch::nn::Module& module,
                                       const MultiTensorOptimizer& optimizer) {
  std::vector<torch::Tensor> weights = module.parameters();
  for (const torch::Tensor& buffer : module.buffers()) weights.push_back(buffer);
  std::vector<torch::Tensor> gradients;
  for (const torch::Tensor& parameter : module.parameters()) gradients.push_back(parameter.grad());
  // What the optimiser updates where it is not the module's parameters (a sharded run's master
  // shards); storage_bytes counts each storage once.
  for (const auto& group : optimizer.param_groups()) {
    for (const torch::Tensor& parameter : group.params()) {
      weights.push_back(parameter);
      gradients.push_back(parameter.grad());
    }
  }
  MemoryBreakdown counted;
  counted.weights = storage_bytes(weights);
  counted.gradients = storage_bytes(gradients);
  counted.optimizer_states = storage_bytes(optimizer.state_tensors());
  return counted;
}

}  // namespace gpubench
