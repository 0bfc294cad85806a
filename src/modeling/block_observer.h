// What runs around each of a transformer's repeated blocks: the models run their blocks through
// run_observed_block(), and a BlockObserver installed on this thread (BlockObserverScope) sees each
// block go in and come out, as PyTorch's module forward hooks let FSDP do. Sharded data parallelism
// (features/parallelism/sharded_data_parallel.h) gathers a block's parameters there and ties its
// backward-pass work to the block's input and output.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "modeling/checkpointable_block.h"

namespace gpubench {

class BlockObserver {
 public:
  virtual ~BlockObserver() = default;
  // The block's input as the block is to see it (the observer may tie autograd work to it).
  virtual torch::Tensor before_block(const torch::nn::Module& block,
                                     const torch::Tensor& hidden) = 0;
  virtual torch::Tensor after_block(const torch::nn::Module& block,
                                    const torch::Tensor& output) = 0;
};

// Installs `observer` for this thread's forward passes until destroyed (nullptr: none).
class BlockObserverScope {
 public:
  explicit BlockObserverScope(BlockObserver* observer);
  ~BlockObserverScope();
  BlockObserverScope(const BlockObserverScope&) = delete;
  BlockObserverScope& operator=(const BlockObserverScope&) = delete;

 private:
  BlockObserver* previous_;
};

BlockObserver* current_block_observer();

// `block` (a module that is a CheckpointableBlock) on `hidden`, run by its recomputation where it
// is checkpointed, seen by this thread's BlockObserver.
template <typename Block>
torch::Tensor run_observed_block(Block& block, const torch::Tensor& hidden,
                                 const std::vector<torch::Tensor>& extras) {
  BlockObserver* observer = current_block_observer();
  const torch::Tensor input = observer ? observer->before_block(block, hidden) : hidden;
  const torch::Tensor output = block.recomputation()
                                   ? block.recomputation()->run(block, input, extras)
                                   : block.run_block(input, extras);
  return observer ? observer->after_block(block, output) : output;
}

}  // namespace gpubench
