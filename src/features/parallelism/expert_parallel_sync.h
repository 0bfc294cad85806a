// Data parallelism beside expert parallelism (docs/parallelism.md#expert-parallelism). Every rank
// has its own tokens, so the parameters outside the experts are averaged over all the ranks, as
// DDP does. An expert's gradient already holds the contributions of every rank's tokens that
// visited it, summed (the exchange's backward brought them back): it is divided by the
// expert-parallel group's size and averaged over the ranks that hold the same experts.
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "distributed/collectives.h"
#include "distributed/gradient_sync.h"
#include "distributed/gradient_synchronizer.h"

namespace gpubench {

class ExpertParallelSync : public GradientSync {
 public:
  // `trainable`: the model's trainable parameters, of which those of `module`'s experts
  // (moe::expert_parameters) are the experts'. `expert_replicas` may hold one rank.
  ExpertParallelSync(Collectives& world, Collectives& expert_replicas, int expert_parallel,
                     torch::nn::Module& module, const std::vector<torch::Tensor>& trainable,
                     int64_t bucket_bytes);

  void finish_step() override;
  // The experts' gradients differ between ranks: an overflow in one is every rank's.
  void agree_on_found_inf(torch::Tensor& found_inf) override;
  int bucket_count() const override;
  int64_t gradient_bytes() const override;
  std::vector<double> take_exposed_communication_ms() override;

 private:
  Collectives& world_;
  std::unique_ptr<GradientSynchronizer> shared_, experts_;
  std::vector<torch::Tensor> expert_parameters_;
  double expert_scale_;
};

}  // namespace gpubench
