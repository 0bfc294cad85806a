#include "run/expert_routing.h"

#include <algorithm>

namespace gpubench {

ExpertRouting::ExpertRouting(torch::nn::Module& model) {
  for (const auto& child : model.modules(/*include_self=*/true)) {
    if (auto* experts = dynamic_cast<moe::ExpertsImpl*>(child.get())) layers_.push_back(experts);
  }
  counted_.resize(layers_.size());
}

void ExpertRouting::window_opened() {
  for (moe::ExpertsImpl* layer : layers_) layer->load().reset();
}

void ExpertRouting::window_closed() {
  for (size_t i = 0; i < layers_.size(); ++i) {
    const std::vector<int64_t> counts = layers_[i]->load().tokens_per_expert();
    counted_[i].resize(std::max(counted_[i].size(), counts.size()));
    for (size_t e = 0; e < counts.size(); ++e) counted_[i][e] += counts[e];
  }
  ++windows_;
}

void ExpertRouting::report(int64_t steps_per_window, ExpertsInfo& info) const {
  const int64_t steps = windows_ * steps_per_window;
  if (layers_.empty() || steps == 0) return;
  info.steps = steps;
  const size_t experts = static_cast<size_t>(layers_.front()->options().experts);
  info.tokens_per_expert_per_step.assign(experts, 0.0);
  int64_t busiest = 0, total = 0, cells = 0;
  for (const std::vector<int64_t>& layer : counted_) {
    for (size_t e = 0; e < layer.size() && e < experts; ++e) {
      info.tokens_per_expert_per_step[e] +=
          static_cast<double>(layer[e]) / static_cast<double>(steps * counted_.size());
      busiest = std::max(busiest, layer[e]);
      total += layer[e];
    }
    cells += static_cast<int64_t>(experts);
  }
  info.load_max_over_mean =
      total > 0 ? static_cast<double>(busiest) * static_cast<double>(cells) / total : 0.0;
  info.dropped_tokens = 0;
}

}  // namespace gpubench
