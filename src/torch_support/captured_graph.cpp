#include "torch_support/captured_graph.h"

#include <chrono>
#include <stdexcept>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace gpubench {

#if GPUBENCH_WITH_CUDA

struct CapturedGraph::Graph {
  at::cuda::CUDAGraph graph;
};

CapturedGraph::CapturedGraph(const std::function<void()>& work, torch::Device device, int warmups) {
  // Before the graph object: constructing one starts CUDA.
  if (!device.is_cuda()) throw std::runtime_error("graph mode needs a CUDA device");
  graph_ = std::make_unique<Graph>();
  const auto index = static_cast<c10::DeviceIndex>(device.index());
  const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(index);
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, index);
  at::cuda::CUDAEvent ready;
  ready.record(main);
  ready.block(side);
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    for (int i = 0; i < warmups; ++i) work();
    side.synchronize();
    const auto start = std::chrono::steady_clock::now();
    graph_->graph.capture_begin();
    work();
    graph_->graph.capture_end();
    side.synchronize();
    capture_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  at::cuda::CUDAEvent captured;
  captured.record(side);
  captured.block(main);
}

void CapturedGraph::replay() {
  if (rehearsed_) return rehearsed_();
  graph_->graph.replay();
}

#else

struct CapturedGraph::Graph {};

CapturedGraph::CapturedGraph(const std::function<void()>&, torch::Device, int) {
  throw std::runtime_error("graph mode needs a CUDA device and a gpubench built with CUDA");
}

void CapturedGraph::replay() {
  if (rehearsed_) rehearsed_();
}

#endif

std::unique_ptr<CapturedGraph> CapturedGraph::rehearsal(const std::function<void()>& work,
                                                        int warmups) {
  std::unique_ptr<CapturedGraph> graph(new CapturedGraph());
  for (int i = 0; i < warmups; ++i) work();
  work();  // where the capture would be
  graph->rehearsed_ = work;
  return graph;
}

CapturedGraph::~CapturedGraph() = default;

}  // namespace gpubench
