// The backward timeline of a training step (docs/scaling.md): when each of DDP's gradient buckets
// (distributed/gradient_buckets.h) became ready, measured from the start of backward, and the
// forward, backward, gradient-sync and optimiser phases. Device events on CUDA, the host clock on
// the CPU, read after the timed windows; `gpubench scale` predicts data-parallel steps from it.
// Recording costs two clock readings and a lock per hook and one event per point; the host time
// spent inside the recorder is measured and stated (overhead_ms). For a model built with fewer
// blocks (--blocks) it times each parameter and tags its block, for `gpubench scale` to extend.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include <torch/torch.h>

#include "results/result.h"
#include "torch_support/device_timers.h"

namespace gpubench {

enum class StepPoint { kBegin, kForwardEnd, kBackwardEnd, kSyncEnd, kEnd };

// The block a parameter belongs to: the first all-digit part of its dotted name ("layers.3.mlp"
// is in block 3), or -1 (embeddings, the head).
int64_t block_of_parameter(const std::string& name);
// block_of_parameter of each trainable parameter of `module`, in trainable_parameters' order.
std::vector<int64_t> blocks_of_trainable(torch::nn::Module& module);

class StepTimeline {
 public:
  StepTimeline(torch::Device device, const std::vector<torch::Tensor>& trainable,
               int64_t bucket_bytes);
  // A model built with fewer blocks than it has (--blocks): every parameter is timed on its own
  // and tagged with its block (`block_of`, aligned with `trainable`; -1 outside the blocks), for
  // `gpubench scale` to extend to the model's depth.
  StepTimeline(torch::Device device, const std::vector<torch::Tensor>& trainable,
               const std::vector<int64_t>& block_of);
  ~StepTimeline();
  StepTimeline(const StepTimeline&) = delete;
  StepTimeline& operator=(const StepTimeline&) = delete;

  void mark(StepPoint point);
  // No marks while paused (a graph's capture) or after stop() (steps past the timed ones).
  void set_paused(bool paused);
  void stop();
  // The medians over the last `steps` complete steps (all of them when fewer were recorded);
  // the device must have been synchronised past them. Steps 0 when none completed.
  StepTimelineInfo summary(size_t steps, const std::string& measured_over);

 private:
  static constexpr int kPointLabels = 5;  // a mark's label: a StepPoint, or kPointLabels + bucket
  void on_gradient(size_t parameter);
  void record(int label);
  bool recording() const { return in_step_ && !paused_ && !stopped_; }

  torch::Device device_;
  std::vector<torch::Tensor> parameters_;
  std::vector<unsigned> hooks_;
  std::vector<size_t> bucket_of_;
  std::vector<int64_t> bucket_bytes_;
  std::vector<size_t> bucket_sizes_;
  std::vector<int64_t> parameter_blocks_;  // per bucket (one parameter each), with block_of
  int64_t bucket_cap_bytes_;
  std::vector<size_t> waiting_;  // per bucket, gradients still to arrive this step
  std::vector<bool> arrived_;    // per parameter, this step
  DeviceMarks marks_;
  std::vector<int> labels_;
  std::mutex mutex_;
  bool in_step_ = false, paused_ = false, stopped_ = false;
  int64_t steps_marked_ = 0;
  std::chrono::steady_clock::duration inside_{};  // host time spent in the recorder
};

}  // namespace gpubench
