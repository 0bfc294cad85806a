#include "features/parallelism/scaling/sharded_prediction.h"

#include <algorithm>

#include "common/errors.h"
#include "common/input_limits.h"
#include "features/parallelism/scaling/checked_product.h"

namespace gpubench {
namespace {

// The collectives of a sharded step, in the order one rank issues them on its one channel (NCCL
// runs a communicator's collectives in order): each starts when issued and the one before it has
// finished.
class ShardedStepCollectives {
 public:
  ShardedStepCollectives(const ScaleInput& input, int gpus, int gpus_per_node, const Fabric& fabric,
                         ShardedPoint& point)
      : input_(input),
        gpus_(gpus),
        gpus_per_node_(gpus_per_node),
        fabric_(fabric),
        gloo_(fabric.measured && fabric.measured->backend == "gloo"),
        point_(point) {}

  // An all-gather of `params` parameters issued at `at`: when it has arrived.
  double gather(double at, int64_t params) {
    const int64_t bytes =
        checked_product({gloo_ ? 4 : input_.activation_bytes, params}, "a unit's bytes");
    const CollectiveCost cost = half_of_allreduce(bytes);
    point_.gather_ms += cost.total_us() / 1000;
    add_sent(bytes, 1);
    return issue(at, cost);
  }
  // The float32 reduce-scatter of `params` parameters' gradients issued at `at`.
  double reduce_scatter(double at, int64_t params) {
    const int64_t bytes = checked_product({4, params}, "a unit's gradients' bytes");
    const CollectiveCost cost =
        gloo_ ? allreduce_cost(bytes, gpus_, gpus_per_node_, fabric_) : half_of_allreduce(bytes);
    point_.reduce_scatter_ms += cost.total_us() / 1000;
    add_sent(bytes, gloo_ ? 2 : 1);
    return issue(at, cost);
  }

 private:
  CollectiveCost half_of_allreduce(int64_t bytes) const {
    CollectiveCost cost = allreduce_cost(bytes, gpus_, gpus_per_node_, fabric_);
    cost.latency_us /= 2;
    cost.bandwidth_us /= 2;
    return cost;
  }
  double issue(double at, const CollectiveCost& cost) {
    point_.latency_ms += cost.latency_us / 1000;
    point_.bandwidth_ms += cost.bandwidth_us / 1000;
    free_at_ = std::max(free_at_, at) + cost.total_us() / 1000;
    return free_at_;
  }
  // A ring phase sends (n-1)/n of the bytes from each rank.
  void add_sent(int64_t bytes, int phases) {
    const int64_t sent = checked_product({phases, bytes, gpus_ - 1}, "the bytes sent") / gpus_;
    point_.sent_bytes = checked_sum(point_.sent_bytes, sent, "the bytes sent");
  }

  const ScaleInput& input_;
  int gpus_, gpus_per_node_;
  const Fabric& fabric_;
  bool gloo_;  // CPU ranks' measured curve: Gloo all-reduces for a reduce-scatter, gathers bf16 as
               // float32
  ShardedPoint& point_;
  double free_at_ = 0;
};

// The forward and backward passes of a sharded step with its collectives, from the single
// device's phases: the device's clock at backward's end, the root's reduce-scatter done.
double passes_with_collectives(const ScaleInput& input, bool full,
                               ShardedStepCollectives& collectives) {
  const StepTimelineInfo& t = input.timeline;
  const int64_t blocks = input.blocks;
  const double head = static_cast<double>(input.vocab * input.hidden_size);
  const double weight = static_cast<double>(blocks * input.block_params) + head;
  const double block_share = static_cast<double>(input.block_params) / weight;
  const double forward_block = t.forward_ms * block_share,
               forward_head = t.forward_ms * head / weight;
  const double backward_block = t.backward_ms * block_share,
               backward_head = t.backward_ms * head / weight;
  std::vector<double> ready(static_cast<size_t>(blocks), 0.0);
  double clock = collectives.gather(0, input.root_params);
  ready[0] = collectives.gather(0, input.block_params);
  for (int64_t i = 0; i < blocks; ++i) {
    clock = std::max(clock, ready[i]);
    if (i + 1 < blocks) ready[i + 1] = collectives.gather(clock, input.block_params);
    clock += forward_block;
  }
  clock += forward_head + backward_head;
  if (full) ready[blocks - 1] = collectives.gather(clock, input.block_params);
  double reduced = 0;
  for (int64_t i = blocks - 1; i >= 0; --i) {
    if (full) {
      clock = std::max(clock, ready[i]);
      if (i > 0) ready[i - 1] = collectives.gather(clock, input.block_params);
    }
    clock = std::max(clock + backward_block, reduced);
    reduced = collectives.reduce_scatter(clock, input.block_params);
  }
  return collectives.reduce_scatter(std::max(clock, reduced), input.root_params);
}

}  // namespace

ShardedPoint predict_sharded_point(const ScaleInput& input, const std::string& mode, int gpus,
                                   int gpus_per_node, const Fabric& fabric) {
  if (input.block_params <= 0 || input.blocks <= 0) {
    throw UsageError("'" + echoed(input.source) + "' (" + input.model +
                     ") records no repeated blocks (model_block_params): --shard predicts a "
                     "model that declares them, from a result this gpubench wrote");
  }
  if (mode != "full" && mode != "grads") {
    throw UsageError("--shard must be full or grads, got '" + echoed(mode) + "'");
  }
  ShardedPoint point;
  point.gpus = gpus;
  ShardedStepCollectives collectives(input, gpus, gpus_per_node, fabric, point);
  const StepTimelineInfo& t = input.timeline;
  const double passes = passes_with_collectives(input, mode == "full", collectives);
  const double communication = point.gather_ms + point.reduce_scatter_ms;
  point.exposed_ms =
      input.overlap ? std::max(0.0, passes - t.forward_ms - t.backward_ms) : communication;
  point.step_ms = input.step_ms - t.gradient_sync_ms + point.exposed_ms;
  point.efficiency = input.step_ms / point.step_ms;
  point.throughput = input.throughput * gpus * point.efficiency;
  const int64_t params =
      checked_sum(checked_product({input.blocks, input.block_params}, "the blocks' parameters"),
                  input.root_params, "the parameters");
  const int64_t gradients = checked_product({4, params}, "the gradients' bytes");
  point.ddp_sent_bytes = checked_product({2, gradients, gpus - 1}, "DDP's bytes sent") / gpus;
  point.bottleneck =
      bottleneck_of(gpus, point.exposed_ms, point.step_ms, point.latency_ms, point.bandwidth_ms);
  return point;
}

ShardedPrediction predict_sharded(const ScaleInput& input, const std::string& mode,
                                  const std::vector<Fabric>& fabrics, const std::vector<int>& gpus,
                                  int gpus_per_node) {
  ShardedPrediction prediction;
  prediction.input = input;
  prediction.mode = mode;
  prediction.gpus_per_node = gpus_per_node;
  prediction.lines = lines_over_fabrics<ShardedLine>(
      fabrics, gpus, gpus_per_node, [&](int n, const Fabric& fabric) {
        return predict_sharded_point(input, mode, n, gpus_per_node, fabric);
      });
  return prediction;
}

}  // namespace gpubench
