#include "modeling/expert_parallel.h"

namespace gpubench::expert_parallel {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Exchange : torch::autograd::Function<Exchange> {
  static Tensor forward(AutogradContext* context, const Tensor& rows,
                        const std::vector<int64_t>& send_counts,
                        const std::vector<int64_t>& receive_counts, tensor_parallel::Group* group) {
    context->saved_data["group"] = reinterpret_cast<int64_t>(group);
    context->saved_data["send"] = send_counts;
    context->saved_data["receive"] = receive_counts;
    return group->all_to_all(rows, send_counts, receive_counts);
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    auto* group = reinterpret_cast<tensor_parallel::Group*>(context->saved_data["group"].toInt());
    const std::vector<int64_t> sent = context->saved_data["send"].toIntVector();
    const std::vector<int64_t> received = context->saved_data["receive"].toIntVector();
    return {group->all_to_all(gradients[0], received, sent), Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

std::vector<int64_t> receive_counts(const std::vector<int64_t>& send_counts,
                                    tensor_parallel::Group& group, torch::Device device) {
  const std::vector<int64_t> ones(send_counts.size(), 1);
  const Tensor counts =
      group.all_to_all(torch::tensor(send_counts, torch::kLong).to(device), ones, ones)
          .to(torch::kCPU);
  return {counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel()};
}

Tensor exchange(const Tensor& rows, const std::vector<int64_t>& send_counts,
                const std::vector<int64_t>& receive_counts, tensor_parallel::Group& group) {
  return Exchange::apply(rows, send_counts, receive_counts, &group);
}

}  // namespace gpubench::expert_parallel
