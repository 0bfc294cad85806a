#include "features/parallelism/scaling/scaling_prediction.h"

#include <algorithm>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/text_table.h"
#include "features/parallelism/scaling/timeline_extension.h"

namespace gpubench {
namespace {

void rescale(ScaleInput& input, double factor) {
  StepTimelineInfo& t = input.timeline;
  input.step_ms *= factor;
  for (double* ms : {&t.forward_ms, &t.backward_ms, &t.optimizer_ms, &t.gradient_sync_ms}) {
    *ms *= factor;
  }
  for (double& ready : t.bucket_ready_ms) ready *= factor;
}

}  // namespace

ScaleInput single_device_input(const Result& result, Task task, const std::string& not_that_task) {
  const std::string file = "'" + echoed(result.loaded_from) + "'";
  if (result.status != RunStatus::kOk) {
    throw UsageError(file + " is not a successful measured run (status " +
                     to_string(result.status) + "): nothing to predict from");
  }
  if (result.benchmark.task != task) throw UsageError(file + not_that_task);
  if (result.distributed.world_size != 1) {
    throw UsageError(file + " ran on " + std::to_string(result.distributed.world_size) +
                     " ranks: scale predicts from a single-device result");
  }
  // A single device runs no model parallelism, and a measured run has a batch: a file that says
  // otherwise (batch -1 is the batch search's "max", never a run's) is not a run to predict from.
  const ResolvedBenchmark& b = result.benchmark;
  if (b.gpus != 1 || b.tensor_parallel != 1 || b.expert_parallel != 1) {
    throw UsageError(file + " records gpus " + std::to_string(b.gpus) + ", tensor_parallel " +
                     std::to_string(b.tensor_parallel) + " and expert_parallel " +
                     std::to_string(b.expert_parallel) +
                     ": scale predicts from a single-device result (each 1)");
  }
  if (b.batch_size < 1) {
    throw UsageError(file + " records batch_size_per_device " + std::to_string(b.batch_size) +
                     ": a measured run has a batch of 1 or more");
  }
  ScaleInput input;
  input.source = result.loaded_from;
  input.model = result.benchmark.model;
  input.precision = to_string(result.benchmark.precision);
  input.device =
      result.system.gpu_names.empty() ? std::string("cpu") : result.system.gpu_names.front();
  input.unit = result.metrics.throughput_unit;
  input.batch_size = result.benchmark.batch_size;
  // What tensor-parallel all-reduces carry: the model's shape, its activations' bytes, LoRA's
  // whole factors.
  input.hidden_size = result.model_hidden_size;
  input.blocks = result.model_blocks;
  input.vocab = result.model_vocab;
  input.experts = result.experts.experts;
  input.experts_per_token = result.experts.experts_per_token;
  input.tensor_parallel_splits = result.model_tensor_parallel_splits;
  input.block_params = result.model_block_params;
  const int64_t built = result.benchmark.blocks > 0 ? result.benchmark.blocks : input.blocks;
  input.root_params = std::max<int64_t>(0, result.params - built * input.block_params);
  input.activation_bytes = compute_element_bytes(result.benchmark.precision);
  if (uses_lora(result.benchmark.tuning)) {
    const std::string& targets = result.benchmark.lora_targets;
    // all-linear: the Llamas' seven projections (the only models that shard).
    input.lora_targets =
        targets == "all-linear"
            ? 7
            : 1 + static_cast<int64_t>(std::count(targets.begin(), targets.end(), ','));
    input.lora_rank = result.benchmark.lora_rank;
  }
  return input;
}

ScaleInput scale_input_from(const Result& result, std::optional<double> throughput,
                            std::optional<int64_t> batch_size, std::optional<int64_t> seq_len) {
  const std::string file = "'" + echoed(result.loaded_from) + "'";
  ScaleInput input = single_device_input(
      result, Task::kTrain, " is not a training run: only training all-reduces gradients");
  if (!result.timeline.present()) {
    throw UsageError(file +
                     " has no backward timeline (written before gpubench recorded one, "
                     "or run with --no-timeline): train it again");
  }
  input.seq_len = result.benchmark.seq_len;
  input.throughput = result.metrics.throughput;
  input.step_ms = result.metrics.step_time_ms.median;
  input.timeline = result.timeline;
  if (input.throughput <= 0 || input.step_ms <= 0) {
    throw UsageError(file + " has no throughput or step time to predict from");
  }
  if (!result.timeline.parameter_blocks.empty()) {
    ExtendedTimeline whole =
        extend_timeline(result.timeline, input.step_ms, int64_t{result.benchmark.bucket_mb} << 20);
    input.throughput *= input.step_ms / whole.step_ms;  // the same samples a step
    input.step_ms = whole.step_ms;
    input.timeline = std::move(whole.timeline);
    input.extended = std::move(whole.how);
  }
  if ((batch_size || seq_len) && !throughput) {
    throw UsageError("--batch-size and --seq-len rescale with --throughput only");
  }
  if (seq_len && input.seq_len <= 0) {
    throw UsageError(file + " has no sequence length (" + input.model +
                     "): --seq-len applies to the fine-tuning models' results");
  }
  if (throughput) {
    const int64_t batch = batch_size.value_or(input.batch_size);
    const int64_t length = seq_len.value_or(input.seq_len);
    const auto shape = [](int64_t b, int64_t s) {
      return "batch " + std::to_string(b) + (s > 0 ? " of " + std::to_string(s) + " tokens" : "");
    };
    // The step of the new shape at the given throughput over the measured step.
    const double items =
        static_cast<double>(batch) * static_cast<double>(std::max<int64_t>(1, length));
    const double measured_items = static_cast<double>(input.batch_size) *
                                  static_cast<double>(std::max<int64_t>(1, input.seq_len));
    const double factor = input.throughput * items / (*throughput * measured_items);
    input.rescaled =
        "times scaled by " + format_fixed(factor, 4) + " so that " + shape(batch, length) +
        " gives " + format_fixed(*throughput, 1) + " " + input.unit + " (--throughput) where " +
        shape(input.batch_size, input.seq_len) + " measured " + format_fixed(input.throughput, 1);
    input.throughput = *throughput;
    input.batch_size = batch;
    input.seq_len = length;
    rescale(input, factor);
  }
  return input;
}

std::string bottleneck_of(int ranks, double added_ms, double step_ms, double latency_ms,
                          double bandwidth_ms) {
  constexpr double kComputeBoundShare = 0.01;
  if (ranks == 1 || added_ms < kComputeBoundShare * step_ms) return "compute";
  return latency_ms > bandwidth_ms ? "latency" : "bandwidth";
}

bool fabric_reaches(const Fabric& fabric, int gpus, int gpus_per_node) {
  return gpus <= gpus_per_node || fabric.inter || fabric.measured;
}

ScalePoint predict_point(const ScaleInput& input, int gpus, int gpus_per_node,
                         const Fabric& fabric) {
  const StepTimelineInfo& t = input.timeline;
  ScalePoint point;
  point.gpus = gpus;
  point.nodes = gpus <= gpus_per_node ? 1 : (gpus + gpus_per_node - 1) / gpus_per_node;
  // Each all-reduce starts when its bucket is ready and the one before it has finished (NCCL
  // runs a communicator's collectives in order, on one stream).
  double free_at = 0;
  for (size_t b = 0; b < t.bucket_bytes.size(); ++b) {
    const CollectiveCost cost = allreduce_cost(t.bucket_bytes[b], gpus, gpus_per_node, fabric);
    free_at = std::max(free_at, t.bucket_ready_ms[b]) + cost.total_us() / 1000;
    point.latency_ms += cost.latency_us / 1000;
    point.bandwidth_ms += cost.bandwidth_us / 1000;
    if (!cost.algorithm.empty()) point.algorithm = cost.algorithm;
  }
  point.communication_ms = point.latency_ms + point.bandwidth_ms;
  point.exposed_ms =
      input.overlap ? std::max(0.0, free_at - t.backward_ms) : point.communication_ms;
  point.step_ms = input.step_ms + point.exposed_ms;
  point.efficiency = input.step_ms / point.step_ms;
  point.throughput = input.throughput * gpus * point.efficiency;
  point.bottleneck =
      bottleneck_of(gpus, point.exposed_ms, point.step_ms, point.latency_ms, point.bandwidth_ms);
  return point;
}

ScalePrediction predict_scaling(const ScaleInput& input, const std::vector<Fabric>& fabrics,
                                const std::vector<int>& gpus, int gpus_per_node) {
  ScalePrediction prediction;
  prediction.input = input;
  prediction.gpus_per_node = gpus_per_node;
  prediction.lines = lines_over_fabrics<ScaleLine>(
      fabrics, gpus, gpus_per_node,
      [&](int n, const Fabric& fabric) { return predict_point(input, n, gpus_per_node, fabric); });
  return prediction;
}

}  // namespace gpubench
