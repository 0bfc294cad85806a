#include "features/parallelism/scaling/tensor_parallel_prediction.h"

#include "common/errors.h"
#include "common/input_limits.h"
#include "features/parallelism/scaling/checked_product.h"

namespace gpubench {
namespace {

// The tokens a step computes: a decode step's one a sequence, else the batch's sequences.
int64_t tokens_a_step(const ScaleInput& input) {
  return checked_product({input.batch_size, input.decode ? 1 : std::max<int64_t>(1, input.seq_len)},
                         "the tokens a step");
}

}  // namespace

ScaleInput decode_input_from(const Result& result) {
  const std::string not_a_generation =
      " is not a generation (infer of a Llama or gpt-oss): no decode step to split";
  ScaleInput input = single_device_input(result, Task::kInfer, not_a_generation);
  const InferenceMetrics& inference = result.metrics.inference;
  if (inference.time_per_output_token_ms.p50 <= 0) {
    throw UsageError("'" + echoed(result.loaded_from) + "'" + not_a_generation);
  }
  input.decode = true;
  if (result.benchmark.weights != "auto") input.precision = result.benchmark.weights + " weights";
  input.unit = "tokens/sec";
  input.throughput = inference.decode_tokens_per_second;
  input.step_ms = inference.time_per_output_token_ms.p50;
  return input;
}

namespace {

// `count` collectives, each `share` of `cost`, none overlapped.
void add_collectives(TensorParallelPoint& point, int64_t count, const CollectiveCost& cost,
                     double share = 1.0) {
  point.latency_ms += share * static_cast<double>(count) * cost.latency_us / 1000;
  point.bandwidth_ms += share * static_cast<double>(count) * cost.bandwidth_us / 1000;
  point.collectives += count;
}

// The step: its compute and every collective after it, and what bounds it.
void total_step(TensorParallelPoint& point) {
  point.communication_ms = point.latency_ms + point.bandwidth_ms;
  point.step_ms = point.compute_ms + point.communication_ms;
  point.bottleneck = bottleneck_of(point.ranks, point.communication_ms, point.step_ms,
                                   point.latency_ms, point.bandwidth_ms);
}

}  // namespace

TensorParallelPoint predict_tensor_parallel_point(const ScaleInput& input, int ranks,
                                                  const Fabric& fabric) {
  if (input.hidden_size <= 0 || input.blocks <= 0) {
    throw UsageError("'" + echoed(input.source) + "' (" + input.model +
                     ") records no transformer shape (model_hidden_size, model_blocks): tensor "
                     "parallelism is predicted for the Llamas' results, from this version on");
  }
  // The run's own rule: a split it would refuse is not predicted.
  if (input.tensor_parallel_splits) {
    if (input.tensor_parallel_splits->empty()) {
      throw UsageError("'" + echoed(input.source) + "' (" + input.model +
                       ") does not shard: tensor parallelism is predicted for the models that "
                       "train with --tensor-parallel");
    }
    if (const std::string why =
            why_not_tensor_split(ranks, *input.tensor_parallel_splits, input.model);
        !why.empty()) {
      throw UsageError(why);
    }
  }
  TensorParallelPoint point;
  point.ranks = ranks;
  point.compute_ms = input.step_ms / ranks;
  const int64_t tokens = tokens_a_step(input);
  point.activation_bytes = checked_product({tokens, input.hidden_size, input.activation_bytes},
                                           "the activations' bytes");
  if (ranks > 1) {
    // `count` collectives of `bytes`, each `share` of a ring all-reduce's cost.
    const auto add = [&](int64_t count, int64_t bytes, double share = 1.0) {
      add_collectives(point, count, allreduce_cost(bytes, ranks, ranks, fabric), share);
    };
    if (input.decode) {
      add(2 * input.blocks + 1, point.activation_bytes);
      add(1,
          checked_product({input.batch_size, input.vocab, input.activation_bytes},
                          "the logits' bytes"),
          0.5);
    } else {
      add(4 * input.blocks + 2, point.activation_bytes);
    }
    // Each whole LoRA factor: lora_A [rank, hidden] of a column-parallel projection, lora_B
    // [hidden, rank] of a row-parallel one (float32).
    if (input.lora_targets > 0) {
      add(checked_product({input.lora_targets, input.blocks}, "the LoRA factors"),
          checked_product({input.lora_rank, input.hidden_size, 4}, "a LoRA factor's bytes"));
    }
  }
  total_step(point);
  point.efficiency = input.step_ms / (ranks * point.step_ms);
  point.throughput = input.throughput * input.step_ms / point.step_ms;
  return point;
}

TensorParallelPrediction predict_tensor_parallel(const ScaleInput& input,
                                                 const std::vector<Fabric>& fabrics,
                                                 const std::vector<int>& ranks, int gpus_per_node) {
  TensorParallelPrediction prediction;
  prediction.input = input;
  prediction.gpus_per_node = gpus_per_node;
  for (const Fabric& fabric : fabrics) {
    TensorParallelLine line;
    line.fabric = fabric;
    for (int t : ranks) {
      if (t > gpus_per_node) {
        line.beyond_one_node.push_back(t);
      } else {
        line.points.push_back(predict_tensor_parallel_point(input, t, fabric));
      }
    }
    prediction.lines.push_back(std::move(line));
  }
  return prediction;
}

TensorParallelPoint predict_expert_parallel_point(const ScaleInput& input, int ranks,
                                                  const Fabric& fabric, int gpus_per_node) {
  if (input.experts <= 0 || input.blocks <= 0 || input.hidden_size <= 0) {
    throw UsageError("'" + echoed(input.source) + "' (" + input.model +
                     ") is not a mixture of experts' result: expert parallelism is predicted for "
                     "gpt-oss's results");
  }
  // The run's own rule: a split it would refuse is not predicted.
  if (const std::string why = why_not_expert_split(ranks, input.experts, input.model);
      !why.empty()) {
    throw UsageError(why);
  }
  TensorParallelPoint point;
  point.ranks = ranks;
  point.compute_ms = input.step_ms;
  const int64_t tokens = tokens_a_step(input);
  const int64_t rows = checked_product({tokens, input.experts_per_token}, "the routed rows");
  point.activation_bytes =
      checked_product({rows, input.hidden_size, input.activation_bytes}, "the routed rows' bytes");
  if (ranks > 1) {
    const auto add = [&](int64_t count, int64_t bytes) {
      add_collectives(point, count, alltoall_cost(bytes, ranks, gpus_per_node, fabric));
    };
    add(input.blocks, int64_t{8} * ranks);  // the counts
    add(input.blocks, checked_product({8, rows}, "the rows' experts"));
    add(input.blocks * (input.decode ? 2 : 4), point.activation_bytes);
  }
  total_step(point);
  point.efficiency = input.step_ms / point.step_ms;
  point.throughput = ranks * input.throughput * point.efficiency;
  return point;
}

TensorParallelPrediction predict_expert_parallel(const ScaleInput& input,
                                                 const std::vector<Fabric>& fabrics,
                                                 const std::vector<int>& ranks, int gpus_per_node) {
  TensorParallelPrediction prediction;
  prediction.input = input;
  prediction.gpus_per_node = gpus_per_node;
  prediction.experts = true;
  prediction.lines = lines_over_fabrics<TensorParallelLine>(
      fabrics, ranks, gpus_per_node, [&](int e, const Fabric& fabric) {
        return predict_expert_parallel_point(input, e, fabric, gpus_per_node);
      });
  return prediction;
}

}  // namespace gpubench
