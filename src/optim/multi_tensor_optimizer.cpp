#include "optim/multi_tensor_optimizer.h"

namespace gpubench {

std::string to_string(OptimizerImplementation implementation) {
  return implementation == OptimizerImplementation::kFused ? "fused" : "foreach";
}

std::vector<torch::Tensor> defined_tensors(
    std::initializer_list<const std::vector<torch::Tensor>*> lists) {
  std::vector<torch::Tensor> defined;
  for (const auto* list : lists) {
    for (const torch::Tensor& tensor : *list) {
      if (tensor.defined()) defined.push_back(tensor);
    }
  }
  return defined;
}

int64_t parameter_bytes(const std::vector<torch::Tensor>& parameters) {
  int64_t bytes = 0;
  for (const torch::Tensor& parameter : parameters) {
    bytes += parameter.numel() * static_cast<int64_t>(parameter.element_size());
  }
  return bytes;
}

int64_t foreach_workspace_bytes(const std::vector<torch::Tensor>& parameters,
                                OptimizerImplementation implementation) {
  return implementation == OptimizerImplementation::kFused ? 0 : parameter_bytes(parameters);
}

}  // namespace gpubench
