// Predicted sharded data parallelism (--shard, docs/scaling.md) from one device's training
// result: its step's forward and backward split over the blocks in proportion to their weights'
// products (a block's parameters each; the head's vocabulary x hidden), and the collectives
// sharding adds, in the order the run issues them on one communication channel:
//   full: the root's and the first block's all-gather before the forward; each next block's
//   during the one before it (prefetch); in backward each block's again, the block below it
//   prefetched during its backward; after each block's backward its float32 reduce-scatter, the
//   one before completed first (one in flight); the root's after backward;
//   grads: the forward's gathers (the updated parameters), and the backward's reduce-scatters.
// An all-gather or a reduce-scatter is half of a ring all-reduce of the same bytes (one of its two
// phases: (n-1) steps, (n-1)/n of the bytes) by collective_cost.h's model; on a measured Gloo
// curve (CPU ranks) a reduce-scatter is an all-reduce, as Gloo runs it, and bf16 is gathered as
// float32. Without overlap (CPU
// ranks: ScaleInput::overlap) every collective's time is added to the step. A prediction, never
// a measurement: every rendering says so.
#pragma once

#include <string>
#include <vector>

#include "features/parallelism/scaling/scaling_prediction.h"

namespace gpubench {

struct ShardedPoint {
  int gpus = 1;
  double step_ms = 0;
  double exposed_ms = 0;  // what the collectives add to the single-device step
  double gather_ms = 0, reduce_scatter_ms = 0;  // every one's time, end to end
  double latency_ms = 0, bandwidth_ms = 0;
  int64_t sent_bytes = 0;      // a rank's, per step
  int64_t ddp_sent_bytes = 0;  // DDP's ring all-reduce of the float32 gradients, per rank
  double throughput = 0;       // all devices together
  double efficiency = 1;       // single-device step over this step
  std::string bottleneck;      // "compute", "latency" or "bandwidth"
};

struct ShardedLine {
  Fabric fabric;
  std::vector<ShardedPoint> points;
  std::vector<int> beyond_one_node;  // world sizes the fabric cannot carry
};

struct ShardedPrediction {
  ScaleInput input;
  std::string mode;  // "full" or "grads"
  int gpus_per_node = 8;
  std::vector<ShardedLine> lines;
};

// Throws UsageError for a result without blocks or with an unknown mode.
ShardedPoint predict_sharded_point(const ScaleInput& input, const std::string& mode, int gpus,
                                   int gpus_per_node, const Fabric& fabric);
ShardedPrediction predict_sharded(const ScaleInput& input, const std::string& mode,
                                  const std::vector<Fabric>& fabrics, const std::vector<int>& gpus,
                                  int gpus_per_node);

// Markdown, CSV or JSON (gpubench.scale-shard/1). Throws UsageError for another format.
std::string render_sharded(const ShardedPrediction& prediction, const std::string& format);

}  // namespace gpubench
