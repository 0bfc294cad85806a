// Data-parallel gradient averaging as PyTorch's DistributedDataParallel does it: gradients are
// gathered into DDP's buckets (distributed/gradient_buckets.h), and each bucket's all-reduce
// starts from a gradient hook as soon as its last gradient arrives, so communication overlaps the
// rest of the backward pass. c10d's Reducer is not used: Debian's LibTorch 1.13 ships reducer.hpp
// without the distributed-autograd headers it includes (see docs/parallelism.md).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <torch/torch.h>

#include "distributed/collectives.h"
#include "distributed/gradient_buckets.h"
#include "distributed/gradient_sync.h"
#include "torch_support/device_timers.h"

namespace gpubench {

class GradientSynchronizer : public GradientSync {
 public:
  GradientSynchronizer(Collectives& collectives, std::vector<torch::Tensor> parameters,
                       int64_t bucket_bytes);
  ~GradientSynchronizer() override;
  GradientSynchronizer(const GradientSynchronizer&) = delete;
  GradientSynchronizer& operator=(const GradientSynchronizer&) = delete;

  // After backward: all-reduces what the hooks have not started yet (parameters that got no
  // gradient this step count as zero, as with DDP's find_unused_parameters), waits for every
  // bucket and writes the averaged gradients into the parameters' .grad.
  void finish_step() override;

  int bucket_count() const override { return static_cast<int>(buckets_.size()); }
  int64_t gradient_bytes() const override { return gradient_bytes_; }
  std::vector<double> take_exposed_communication_ms() override { return exposed_.take_ms(); }

 private:
  struct Slot {
    torch::Tensor parameter;
    size_t bucket = 0;
    torch::Tensor view;  // the parameter's gradient inside its bucket
    bool ready = false;
    unsigned hook = 0;
  };
  struct Bucket {
    torch::Tensor buffer;
    size_t waiting = 0;  // gradients still to arrive this step
    size_t size = 0;
  };

  void on_gradient(size_t slot, const torch::Tensor& gradient);
  void mark_ready(size_t slot);
  void launch_ready_buckets();

  Collectives& collectives_;
  std::vector<Slot> slots_;
  std::vector<Bucket> buckets_;
  std::vector<PendingCollective> pending_;
  size_t next_bucket_ = 0;  // buckets launch in index order on every rank
  int64_t gradient_bytes_ = 0;
  std::mutex mutex_;
  DeviceIntervals exposed_;
};

}  // namespace gpubench
