// Generation's decode step in the static form (TextGenerator::next_token_logits_at): the token
// and its position in device tensors, so the step is the same kernels at every position. Run
// eagerly, or (graph mode, CUDA) captured once in a CUDA graph and replayed for every token, so
// the host launches one graph per token instead of a kernel per operation.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "modeling/text_generation.h"
#include "torch_support/captured_graph.h"

namespace gpubench {

class StaticDecode {
 public:
  // `capture`: a CUDA graph of one step after warm-up steps (CapturedGraph), which write into
  // the cache's first position; the next prompt overwrites it.
  StaticDecode(TextGenerator& model, KvCache& cache, int64_t batch, torch::Device device,
               bool capture);

  // The next tokens [batch, 1] after `token` at position cache.length, which it advances. The
  // tensor returned is overwritten by the next step.
  torch::Tensor step(const torch::Tensor& token);
  double capture_ms() const { return graph_ ? graph_->capture_ms() : 0; }
  // The kernels a captured step launches (CapturedGraph::kernels_per_replay); -1 where unknown.
  int64_t kernels_per_step() const { return graph_ ? graph_->kernels_per_replay() : -1; }

 private:
  void run_step();

  TextGenerator& model_;
  KvCache& cache_;
  torch::Tensor token_, position_, next_;
  std::unique_ptr<CapturedGraph> graph_;
};

}  // namespace gpubench
