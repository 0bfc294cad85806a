#include "features/parallelism/expert_parallel.h"

namespace gpubench::parallelism {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Exchange : torch::autograd::Function<Exchange> {
  static Tensor forward(AutogradContext* context, const Tensor& rows,
                        const std::vector<int64_t>& send_counts,
                        const std::vector<int64_t>& receive_counts, LayerCollectives* collectives) {
    context->saved_data["collectives"] = reinterpret_cast<int64_t>(collectives);
    context->saved_data["send"] = send_counts;
    context->saved_data["receive"] = receive_counts;
    return collectives->all_to_all(rows, send_counts, receive_counts);
  }
  static variable_list backward(AutogradContext* context, variable_list gradients) {
    auto* collectives =
        reinterpret_cast<LayerCollectives*>(context->saved_data["collectives"].toInt());
    const std::vector<int64_t> sent = context->saved_data["send"].toIntVector();
    const std::vector<int64_t> received = context->saved_data["receive"].toIntVector();
    return {collectives->all_to_all(gradients[0], received, sent), Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

std::vector<int64_t> ExpertParallelLayers::receive_counts(const std::vector<int64_t>& send_counts,
                                                          torch::Device device) {
  const std::vector<int64_t> ones(send_counts.size(), 1);
  const Tensor counts =
      collectives_.all_to_all(torch::tensor(send_counts, torch::kLong).to(device), ones, ones)
          .to(torch::kCPU);
  return {counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel()};
}

Tensor ExpertParallelLayers::exchange(const Tensor& rows, const std::vector<int64_t>& send_counts,
                                      const std::vector<int64_t>& receive_counts) {
  // Rows without a gradient to return (the experts' ids) travel as they are.
  if (!torch::GradMode::is_enabled() || !rows.requires_grad()) {
    return collectives_.all_to_all(rows, send_counts, receive_counts);
  }
  return Exchange::apply(rows, send_counts, receive_counts, &collectives_);
}

}  // namespace gpubench::parallelism
