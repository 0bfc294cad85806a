// Graph mode: a piece of device work captured once in a CUDA graph after warm-up
// calls on a side stream, then replayed on the current stream (docs/method.md, docs/inference.md).
// CUDA only: training's GraphedStep and inference's forward pass and decode step capture through
// it.
#pragma once

#include <functional>
#include <memory>

#include <torch/torch.h>

namespace gpubench {

class CapturedGraph {
 public:
  // Calls `work` `warmups` times on a side stream (cuBLAS and cuDNN handles, workspaces, the
  // allocator settle), then captures one call. Throws std::runtime_error on a device other than
  // CUDA or in a gpubench built without CUDA.
  CapturedGraph(const std::function<void()>& work, torch::Device device, int warmups);
  // The same calls in the same order without a device graph (the warm-ups, one call where the
  // capture would be, `work` again for each replay): for tests, on the CPU, of what runs around
  // a capture.
  static std::unique_ptr<CapturedGraph> rehearsal(const std::function<void()>& work, int warmups);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void replay();
  double capture_ms() const { return capture_ms_; }
  // The kernels one replay launches: the captured graph's kernel nodes, those of graphs nested in
  // it included (the device's own count of what the launch census counts on the CPU). -1 where
  // not known: a rehearsal, or a LibTorch that does not keep the captured graph (before 2.8).
  int64_t kernels_per_replay() const { return kernels_per_replay_; }

  // Captures begun and not yet ended in this process, rehearsals' included: 0 whenever no
  // constructor is running. A capture that throws is ended on its way out, as PyTorch's
  // torch.cuda.graph context ends it; a stream left capturing would make every later CUDA call
  // fail with "operation not permitted when stream is capturing", hiding the real error.
  static int captures_open();

 private:
  CapturedGraph() = default;
  struct Graph;
  std::unique_ptr<Graph> graph_;
  std::function<void()> rehearsed_;  // set for a rehearsal: replay calls it
  double capture_ms_ = 0;
  int64_t kernels_per_replay_ = -1;
};

}  // namespace gpubench
