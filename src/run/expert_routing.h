// How a mixture of experts routed its tokens over a run's timed windows (results' "experts"
// block): each MoE layer's counts reset as a window opens and summed as it closes, so warm-up and
// the FLOP-counting pass are left out.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "modeling/mixture_of_experts.h"
#include "results/result.h"

namespace gpubench {

class ExpertRouting {
 public:
  explicit ExpertRouting(torch::nn::Module& model);
  bool present() const { return !layers_.empty(); }
  void window_opened();
  void window_closed();
  // `info` with the counts over the closed windows of `steps_per_window` steps each.
  void report(int64_t steps_per_window, ExpertsInfo& info) const;

 private:
  std::vector<moe::ExpertsImpl*> layers_;
  std::vector<std::vector<int64_t>> counted_;  // per layer, per expert
  int64_t windows_ = 0;
};

}  // namespace gpubench
