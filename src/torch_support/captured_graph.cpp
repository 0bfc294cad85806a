#include "torch_support/captured_graph.h"

#include <chrono>
#include <stdexcept>
#include <vector>

#include "torch_support/compat.h"

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace gpubench {
namespace {

int g_captures_open = 0;

// Between a capture's begin and its end: the end runs on every path out. On an exception the
// end's own error (a capture the failure invalidated) is dropped, so that the first error is
// the one reported.
class CaptureScope {
 public:
  CaptureScope(const std::function<void()>& begin, std::function<void()> end)
      : end_(std::move(end)) {
    begin();
    ++g_captures_open;
  }
  ~CaptureScope() {
    if (!open_) return;
    --g_captures_open;
    try {
      end_();
    } catch (...) {
    }
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

  void end() {
    open_ = false;
    --g_captures_open;
    end_();
  }

 private:
  std::function<void()> end_;
  bool open_ = true;
};

}  // namespace

int CapturedGraph::captures_open() {
  return g_captures_open;
}

#if GPUBENCH_WITH_CUDA

#if GPUBENCH_GRAPH_KEEPS_ITS_NODES
struct CapturedGraph::Graph {
  at::cuda::CUDAGraph graph{/*keep_graph=*/true};
};

namespace {

// The kernel nodes of `graph` and of the graphs nested in it.
int64_t kernel_nodes(cudaGraph_t graph) {
  size_t count = 0;
  C10_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  C10_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  int64_t kernels = 0;
  for (const cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    C10_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel) ++kernels;
    if (type == cudaGraphNodeTypeGraph) {
      cudaGraph_t child = nullptr;
      C10_CUDA_CHECK(cudaGraphChildGraphNodeGetGraph(node, &child));
      kernels += kernel_nodes(child);
    }
  }
  return kernels;
}

// The captured graph's kernels counted, then the graph made ready to replay.
int64_t count_and_instantiate(at::cuda::CUDAGraph& graph) {
  const int64_t kernels = kernel_nodes(graph.raw_cuda_graph());
  graph.instantiate();
  return kernels;
}

}  // namespace
#else
struct CapturedGraph::Graph {
  at::cuda::CUDAGraph graph;
};

namespace {
int64_t count_and_instantiate(at::cuda::CUDAGraph&) {
  return -1;  // capture_end instantiated it and dropped the graph
}
}  // namespace
#endif

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
    CaptureScope capture([this] { graph_->graph.capture_begin(); },
                         [this] { graph_->graph.capture_end(); });
    work();
    capture.end();
    kernels_per_replay_ = count_and_instantiate(graph_->graph);
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
  CaptureScope capture([] {}, [] {});  // where the capture would be
  work();
  capture.end();
  graph->rehearsed_ = work;
  return graph;
}

CapturedGraph::~CapturedGraph() = default;

}  // namespace gpubench
