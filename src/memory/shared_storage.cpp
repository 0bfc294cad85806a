#include "memory/shared_storage.h"

#include <algorithm>
#include <map>
#include <optional>
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

// The dtype a tensor is held in: `floating_as` for a floating tensor where given.
c10::ScalarType held_dtype(const torch::Tensor& tensor,
                           std::optional<c10::ScalarType> floating_as = std::nullopt) {
  return floating_as && tensor.is_floating_point() ? *floating_as : tensor.scalar_type();
}

BufferKey key_of(const torch::Tensor& tensor,
                 std::optional<c10::ScalarType> floating_as = std::nullopt) {
  return {held_dtype(tensor, floating_as), tensor.device().str()};
}

// One zeroed buffer per dtype and device, as long as the longest of the tensors needs.
std::map<BufferKey, torch::Tensor> zeroed_buffers(
    const std::vector<torch::Tensor>& tensors,
    std::optional<c10::ScalarType> floating_as = std::nullopt) {
  std::map<BufferKey, int64_t> lengths;
  std::map<BufferKey, torch::TensorOptions> options;
  for (const torch::Tensor& tensor : tensors) {
    const BufferKey key = key_of(tensor, floating_as);
    int64_t& length = lengths[key];
    length = std::max(length, reached_elements(tensor));
    options.emplace(key, tensor.options().dtype(held_dtype(tensor, floating_as)));
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

void share_zeroed_parameters(const std::vector<torch::Tensor>& parameters,
                             std::optional<c10::ScalarType> floating_as) {
  torch::NoGradGuard no_grad;
  const std::map<BufferKey, torch::Tensor> buffers = zeroed_buffers(parameters, floating_as);
  for (torch::Tensor parameter : parameters) {
    if (parameter.numel() == 0) continue;
    parameter.set_data(over_buffer(buffers.at(key_of(parameter, floating_as)), parameter));
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
