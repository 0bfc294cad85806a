// The peak of each moment of a backward pass: a tensor-byte reading at the end of every autograd
// node, for fit's probes (docs/memory.md, "A peak that moves").
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace gpubench {

// While one lives, the end of every backward node on any thread reads the tensor bytes' peak on
// `device` since the node before ended, then resets it (tensor_memory::reset_peak). One at a time.
class BackwardMoments {
 public:
  struct Moment {
    size_t node;   // a hash of the node's name ("MmBackward0"): moments of two probes align by it
    int64_t peak;  // the highest tensor bytes since the node before ended
  };

  explicit BackwardMoments(torch::Device device);
  ~BackwardMoments();
  BackwardMoments(const BackwardMoments&) = delete;
  BackwardMoments& operator=(const BackwardMoments&) = delete;

  // Taken once backward has ended: the moments so far, and what has been reset away from the
  // device's peak count (the highest of them).
  std::vector<Moment> take();
  int64_t highest() const;

 private:
  friend struct BackwardMomentsCallback;
  void record(const char* node);

  torch::Device device_;
  std::vector<Moment> moments_;
  int64_t highest_ = 0;
  uint64_t handle_ = 0;
};

// The moment whose peak grows fastest from a backward pass at a smaller batch to one at a larger:
// its index in each, the two matched by their nodes, from the start and from the end as long as
// those are the same (a batch can run nodes the other does not, such as an adaptive softmax's
// cluster that none of its tokens fall in: the moments between are left out). Of the moments'
// peaks, above the activations, only those at or above them in both count: a moment after some
// activations were freed gains from the batch only what its temporaries outgrow them by, and at
// batches 1 and 2 such moments bend with the kernels' choices (VGG16 bf16's moment 99 of 111 grew
// 17 MB from batch 1 to 2 and fell 21 MB from 2 to 4: at batch 64, 18.6 % over its run). None
// where no pair counts.
std::optional<std::pair<size_t, size_t>> steepest_moment(
    const std::vector<BackwardMoments::Moment>& smaller,
    const std::vector<BackwardMoments::Moment>& larger);

}  // namespace gpubench
