// Predicted data-parallel scaling from one device's backward timeline (docs/scaling.md): each
// bucket's all-reduce starts when its gradients are ready and the previous all-reduce has
// finished, overlapping the rest of backward; the step is
//   other + forward + max(backward, end of the last all-reduce) + optimiser
// where `other` is what the measured step spent outside those phases. Without overlap
// (ScaleInput::overlap) every all-reduce's time is added to the step. A prediction, never a
// measurement: every rendering says so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "features/parallelism/scaling/collective_cost.h"
#include "features/parallelism/scaling/fabric.h"
#include "results/result.h"

namespace gpubench {

struct ScaleInput {
  std::string source;  // the result file
  std::string model, precision, device, unit;
  int64_t batch_size = 0;     // per device
  int64_t seq_len = 0;        // tokens a sequence (the fine-tuning models); 0: none
  double throughput = 0;      // one device's, in `unit` (rescaled when asked)
  double step_ms = 0;         // one device's median step (rescaled when asked)
  StepTimelineInfo timeline;  // its times rescaled too
  std::string rescaled;       // how, when --throughput gave another single-device figure
  std::string extended;       // how, when the result built fewer blocks (timeline_extension.h)
  // Whether the all-reduces run beside backward (a GPU's copy engines and spare SMs) or take the
  // device's compute for their whole time (CPU ranks of one core each: Gloo's reduction and the
  // kernel's socket copies run on the core that computes).
  bool overlap = true;
  // A transformer's shape, from the result (its declared width, depth and vocabulary), and its
  // activations' bytes an element: what tensor-parallel all-reduces carry. 0: not a transformer.
  int64_t hidden_size = 0, blocks = 0, vocab = 0, activation_bytes = 4;
  // LoRA: the targeted roles and the adapters' rank (each whole factor's gradient is summed over
  // a tensor-parallel group); 0: full tuning.
  int64_t lora_targets = 0, lora_rank = 0;
  // The sharding units' parameters (sharded_prediction.h): one block's, and the rest's (the
  // embeddings, final norm and head); 0: the result records no blocks.
  int64_t block_params = 0, root_params = 0;
  // A mixture of experts: its experts a layer and how many each token visits; 0: a dense model.
  int64_t experts = 0, experts_per_token = 0;
  // What a tensor-parallel rank splits (the result's record); nullopt: an older result.
  std::optional<TensorParallelSplits> tensor_parallel_splits;
  // A generation's decode step (tensor_parallel_prediction.h's decode_input_from): step_ms is the
  // median time per output token, batch_size the sequences a step, one token each.
  bool decode = false;
};

// What every prediction takes from a single device's successful run of `task` (else UsageError,
// `not_that_task` after the file's name): where it ran, the model, its batch and its shape.
ScaleInput single_device_input(const Result& result, Task task, const std::string& not_that_task);

// From a single-device training result with a timeline; with `throughput`, every time is scaled
// so that a step of `batch_size` (default: the result's) gives that throughput (a published
// figure), keeping the timeline's shape: compute taken as proportional to the batch, the
// gradient buckets as measured (they do not depend on the batch). A result of fewer blocks than
// its model has (train --blocks) is first extended to the whole depth. Throws UsageError for a
// result that cannot be predicted from, saying why.
// With `seq_len` (a token model's), the figure's sequence length: compute taken as proportional
// to the tokens a step.
ScaleInput scale_input_from(const Result& result, std::optional<double> throughput = {},
                            std::optional<int64_t> batch_size = {},
                            std::optional<int64_t> seq_len = {});

struct ScalePoint {
  int gpus = 1;
  int nodes = 1;
  double step_ms = 0;
  double throughput = 0;                    // all devices together
  double efficiency = 1;                    // single-device step over this step
  double exposed_ms = 0;                    // communication past the end of backward
  double communication_ms = 0;              // every bucket's all-reduce, end to end
  double latency_ms = 0, bandwidth_ms = 0;  // its two parts
  std::string algorithm;
  std::string bottleneck;  // "compute", "bandwidth" or "latency"
};

struct ScaleLine {
  Fabric fabric;
  std::vector<ScalePoint> points;
  std::vector<int> beyond_one_node;  // world sizes left out: the fabric names no network
};

struct ScalePrediction {
  ScaleInput input;
  int gpus_per_node = 8;
  std::vector<ScaleLine> lines;
};

// What binds a predicted step: "compute" where one rank alone communicates nothing or what
// communication adds is under 1 % of the step (noise), else the larger of its latency and
// bandwidth parts.
std::string bottleneck_of(int ranks, double added_ms, double step_ms, double latency_ms,
                          double bandwidth_ms);

// Whether the fabric can carry `gpus`: within one node, or with a network or a measured curve.
bool fabric_reaches(const Fabric& fabric, int gpus, int gpus_per_node);

// A line a fabric (Line: fabric, points, beyond_one_node) of `point_of(gpus, fabric)` at each
// world size the fabric reaches; the others listed as beyond one node.
template <typename Line, typename PointOf>
std::vector<Line> lines_over_fabrics(const std::vector<Fabric>& fabrics,
                                     const std::vector<int>& gpus, int gpus_per_node,
                                     const PointOf& point_of) {
  std::vector<Line> lines;
  for (const Fabric& fabric : fabrics) {
    Line line;
    line.fabric = fabric;
    for (int n : gpus) {
      if (fabric_reaches(fabric, n, gpus_per_node)) {
        line.points.push_back(point_of(n, fabric));
      } else {
        line.beyond_one_node.push_back(n);
      }
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

ScalePoint predict_point(const ScaleInput& input, int gpus, int gpus_per_node,
                         const Fabric& fabric);
ScalePrediction predict_scaling(const ScaleInput& input, const std::vector<Fabric>& fabrics,
                                const std::vector<int>& gpus, int gpus_per_node);

// Markdown, CSV, JSON (gpubench.scale/1) or HTML with a chart of efficiency against GPUs, one
// line per fabric. Throws UsageError for another format.
std::string render_scaling(const ScalePrediction& prediction, const std::string& format);

}  // namespace gpubench
