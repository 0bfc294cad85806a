// Predicted tensor parallelism from one device's training result (docs/scaling.md): one model
// replica split over T ranks of a node. The step's time is split evenly over the ranks, and the
// replica's all-reduces are added, since each one stands between two products on the critical
// path (nothing overlaps them): per block, two in forward (after o and down) and two in backward
// (the block input's gradient before each half), of batch x tokens x hidden activations; the
// embedding's sum and the head input's gradient; with LoRA, each whole adapter factor's gradient
// (rank x hidden, float32). A decode step (from a generation's result) has two all-reduces a
// block and the embedding's, of batch x hidden, and the logits' all-gather (half a ring
// all-reduce of batch x vocabulary). Each costs what collective_cost.h's ring gives on the
// node's link. A prediction, never a measurement: every rendering says so.
#pragma once

#include <string>
#include <vector>

#include "features/parallelism/scaling/scaling_prediction.h"

namespace gpubench {

struct TensorParallelPoint {
  int ranks = 1;
  double step_ms = 0;     // the replica's step
  double compute_ms = 0;  // the single-device step over the ranks
  double communication_ms = 0, latency_ms = 0, bandwidth_ms = 0;
  int64_t collectives = 0;       // a step's
  int64_t activation_bytes = 0;  // each activation all-reduce's message
  double throughput = 0;         // the replica's, in the input's unit
  double efficiency = 1;         // single-device step / (ranks x this step)
  std::string bottleneck;        // "compute", "latency" or "bandwidth"
};

struct TensorParallelLine {
  Fabric fabric;
  std::vector<TensorParallelPoint> points;
  std::vector<int> beyond_one_node;  // more ranks than a node holds: refused, not predicted
};

struct TensorParallelPrediction {
  ScaleInput input;
  int gpus_per_node = 8;
  std::vector<TensorParallelLine> lines;
  // Expert parallelism's (predict_expert_parallel): the points' collectives are all-to-all
  // exchanges, and the ranks may span nodes.
  bool experts = false;
};

// From a single-device generation's result (infer of a Llama or gpt-oss): its median time per
// output token and decode rate. Throws UsageError for a result that cannot be predicted from,
// saying why.
ScaleInput decode_input_from(const Result& result);

// Throws UsageError for a result without a transformer's shape.
TensorParallelPoint predict_tensor_parallel_point(const ScaleInput& input, int ranks,
                                                  const Fabric& fabric);
TensorParallelPrediction predict_tensor_parallel(const ScaleInput& input,
                                                 const std::vector<Fabric>& fabrics,
                                                 const std::vector<int>& ranks, int gpus_per_node);

// Predicted expert parallelism (docs/scaling.md#expert-parallelism) from one device's result of a
// mixture of experts, training or a generation's decode step. Every rank keeps its own batch and
// the single-device step's compute (routing taken as balanced: each rank's experts compute as
// many rows as one device's did), and adds the exchanges gpubench's MoE layers make, none
// overlapped. Per layer and pass: the counts, the routed rows' expert ids (8 bytes a row), and
// the rows out and back (tokens x k rows of hidden activations); backward sends the rows'
// gradients back and forth once more. Each costs collective_cost.h's pairwise all-to-all. The
// world may span nodes where the fabric has a network. Throws UsageError for a result that is
// not a mixture of experts.
TensorParallelPoint predict_expert_parallel_point(const ScaleInput& input, int ranks,
                                                  const Fabric& fabric, int gpus_per_node);
TensorParallelPrediction predict_expert_parallel(const ScaleInput& input,
                                                 const std::vector<Fabric>& fabrics,
                                                 const std::vector<int>& ranks, int gpus_per_node);

// Markdown, CSV or JSON (gpubench.scale-tp/1; with experts, gpubench.scale-ep/1). Throws UsageError
// for another format.
std::string render_tensor_parallel(const TensorParallelPrediction& prediction,
                                   const std::string& format);

}  // namespace gpubench
