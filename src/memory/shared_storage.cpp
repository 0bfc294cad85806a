#include "memory/shared_storage.h"

#include <algorithm>
#include <map>
#include <utility>

namespace gpubench {
namespace {

// The elements a tensor's sizes and strides reach from its storage offset (0: it is empty).
int64_t reached_elements(const torch::Tensor& tensor) {
  if (tensor.numel() == 0) return 0;
  int64_t last = 0;
  for (int64_t d = 0; d < tensor.dim(); ++d) last += (tensor.size(d) - 1) * tensor.stride(d);
  return last + 1;
}

using BufferKey = std::pair<c10::ScalarType, std::string>;

BufferKey key_of(const torch::Tensor& tensor) {
  return {tensor.scalar_type(), tensor.device().str()};
}

// One zeroed buffer per dtype and device, as long as the longest of the tensors needs.
std::map<BufferKey, torch::Tensor> zeroed_buffers(const std::vector<torch::Tensor>& tensors) {
  std::map<BufferKey, int64_t> lengths;
  std::map<BufferKey, torch::TensorOptions> options;
  for (const torch::Tensor& tensor : tensors) {
    int64_t& length = lengths[key_of(tensor)];
    length = std::max(length, reached_elements(tensor));
    options.emplace(key_of(tensor), tensor.options());
  }
  std::map<BufferKey, torch::Tensor> buffers;
  for (const auto& [key, length] : lengths) {
    buffers[key] = torch::zeros({length}, options.at(key).requires_grad(false));
  }
  return buffers;
}

// A new tensor (its own version counter) over the buffer, with the tensor's sizes and strides.
torch::Tensor over_buffer(const torch::Tensor& buffer, const torch::Tensor& like) {
  return torch::empty({0}, buffer.options())
      .set_(buffer.storage(), 0, like.sizes(), like.strides());
}

}  // namespace

void share_zeroed_parameters(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  const std::map<BufferKey, torch::Tensor> buffers = zeroed_buffers(parameters);
  for (torch::Tensor parameter : parameters) {
    if (parameter.numel() == 0) continue;
    parameter.set_data(over_buffer(buffers.at(key_of(parameter)), parameter));
  }
}

void share_zeroed_gradients(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> gradients;
  for (const torch::Tensor& parameter : parameters) {
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  }
  const std::map<BufferKey, torch::Tensor> buffers = zeroed_buffers(gradients);
  for (torch::Tensor parameter : parameters) {
    torch::Tensor& gradient = parameter.mutable_grad();
    if (!gradient.defined() || gradient.numel() == 0) continue;
    gradient = over_buffer(buffers.at(key_of(gradient)), gradient);
  }
}

}  // namespace gpubench
