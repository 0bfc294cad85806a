// One benchmark run's result file: schema "gpubench.result/1" (docs/results.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/inference_info.h"
#include "results/memory_info.h"
#include "results/statistics.h"
#include "results/system_info.h"
#include "results/telemetry_info.h"
#include "settings/benchmark.h"

namespace gpubench {

inline constexpr const char* kResultSchema = "gpubench.result/1";
// The largest throughput a result may carry (samples/sec): a million devices at a billion each.
// Beyond it a figure is a forgery or a bug, and its squares would overflow the statistics.
inline constexpr double kMaxThroughput = 1e15;

// kPublished: a figure from a published source (results/reference/), not measured here.
// kSkipped: a suite entry this machine or build cannot run (`run --skip-unavailable`), not run.
enum class RunStatus { kOk, kFailed, kOom, kPublished, kSkipped };
// ok or published: the result carries a throughput.
bool has_throughput(RunStatus status);
std::string to_string(RunStatus status);
RunStatus parse_run_status(const std::string& text);

struct Metrics {
  double throughput = 0;  // global samples/sec of the median trial
  std::string throughput_unit;
  double per_device_throughput = 0;
  Summary step_time_ms;
  std::vector<double> trials;  // throughput of every trial, in run order
  int64_t peak_memory_bytes = 0;
  std::string peak_memory_source;  // "cuda caching allocator" or "process max RSS"
  MemoryReport memory;             // where the peak went (results/memory_info.h)
  int64_t forward_flops_per_sample = 0;
  int64_t train_flops_per_step = 0;  // global: 3 x forward FLOPs x samples per step
  double achieved_tflops = 0;
  double final_loss = 0;
  int64_t skipped_steps = 0;        // fp16 steps skipped for inf/NaN gradients
  double sequences_per_second = 0;  // language models: throughput / tokens per sequence
  double tokens_per_second = 0;     // models that read tokens (Transformer-XL, BERT, Llama)
  double graph_capture_ms = 0;      // graph mode: capturing the step into a CUDA graph
  // precision fp8 (docs/fp8.md): the share of the step's products (training: forward and both
  // gradients; inference: the forward passes) that ran in FP8, counted as they ran.
  double fp8_matmul_flop_share = 0;
  // achieved_tflops over the datasheet's dense peak of the precision that ran, times the
  // devices; 0 when the GPU matched no datasheet entry.
  double achieved_fraction_of_peak = 0;
  InferenceMetrics inference;  // task infer: latency, and generation's figures
};

// The datasheet entry the run's GPU matched (datasheets/), with the figures efficiency and
// `compare` use, copied so that a result stays readable when the database changes.
struct DatasheetInfo {
  bool matched = false;
  std::string entry;          // "H200-SXM"
  std::string reason;         // how it matched, or why not
  std::string peak_quantity;  // "bf16_tflops": the precision that ran
  double peak_tflops = 0;     // per device
  std::string peak_source;    // its source's URL
  double memory_bandwidth_gbs = 0;
  double tdp_w = 0;
};

// How a run was spread over ranks and what its gradient communication cost.
struct DistributedInfo {
  int world_size = 1;
  int nodes = 1;
  std::string backend = "none";   // "gloo" or "nccl"; "none" for a single process
  std::string launcher = "none";  // "gpubench", "torchrun", "slurm" or "mpi"
  int buckets = 0;
  int64_t gradient_bytes = 0;  // all-reduced per step, per rank
  // Communication the backward pass did not hide: per step, mean over the timed steps, on the
  // slowest rank; and as a share of the median step time.
  double exposed_communication_ms = 0;
  double exposed_communication_share = 0;
  // --tensor-parallel (docs/parallelism.md): ranks per model replica, and the time the device
  // waited on the replica's all-reduces and gathers, mean over the timed steps on the slowest
  // rank: per training step, or per decode step of a generation (its prompt pass's apart); the
  // collectives per step.
  int tensor_parallel = 1;
  double tensor_parallel_exposed_ms = 0;
  double tensor_parallel_prefill_exposed_ms = 0;
  int64_t tensor_parallel_collectives = 0;
  // --expert-parallel (docs/parallelism.md#expert-parallelism): ranks that split the experts,
  // and the time the device waited on their all-to-all exchanges, as the tensor-parallel fields.
  int expert_parallel = 1;
  double expert_parallel_exposed_ms = 0;
  double expert_parallel_prefill_exposed_ms = 0;
  int64_t expert_parallel_collectives = 0;
  // --shard (docs/parallelism.md): bytes all-gathered per step per rank, and the time the device
  // waited inside forward and backward on the gathers the prefetch did not hide and on each
  // reduce-scatter's predecessor (slowest rank, mean over the timed steps).
  int64_t gathered_bytes = 0;
  double exposed_in_passes_ms = 0;
};

// --profile (docs/profiling.md): the extra trial run under the op profiler after the measured
// ones; its figures are not among the metrics.
struct ProfileInfo {
  std::string trace;     // the file written; empty: the run was not profiled
  std::string profiler;  // "kineto" or "legacy"
  int64_t steps = 0;
  double throughput = 0;  // of the profiled trial, in metrics' unit
  bool present() const { return !trace.empty(); }
};

// The backward timeline (docs/scaling.md): a training step's phases and when each of DDP's
// gradient buckets became ready, medians over the timed steps; what `gpubench scale` predicts
// from. Times in ms; bucket readiness measured from the start of backward.
struct StepTimelineInfo {
  std::string clock;          // "cuda events" or "host clock"
  std::string measured_over;  // "timed steps", or "eager warm-up steps" for a graph
  int64_t steps = 0;          // 0: none recorded
  double forward_ms = 0;
  double backward_ms = 0;
  double gradient_sync_ms = 0;  // waiting for the all-reduces after backward (data parallel)
  double optimizer_ms = 0;
  int64_t bucket_cap_bytes = 0;
  int64_t first_bucket_cap_bytes = 0;
  std::vector<int64_t> bucket_bytes;
  std::vector<double> bucket_ready_ms;
  double overhead_ms = 0;  // host time per step spent recording the timeline
  // A model built with fewer blocks than it has (--blocks): one bucket a parameter, each
  // parameter's block (-1 outside the blocks), and the model's own number of blocks.
  std::vector<int64_t> parameter_blocks;
  int64_t model_blocks = 0;
  bool present() const { return steps > 0; }
  int64_t gradient_bytes() const {  // every bucket's, one step's gradients
    int64_t bytes = 0;
    for (int64_t b : bucket_bytes) bytes += b;
    return bytes;
  }
};

// A mixture of experts (docs/models.md#mixture-of-experts): what one token computes with, and how
// the routed tokens spread over the experts in the timed windows.
struct ExpertsInfo {
  int64_t experts = 0;  // per MoE layer; 0: a dense model (no block written)
  int64_t experts_per_token = 0;
  int64_t active_params = 0;  // per token: all but the embedding table and the unchosen experts
  int64_t steps = 0;          // timed steps (generations, for infer) the counts cover; 0: none
  // Per expert, tokens routed to it per step, the mean over the MoE layers.
  std::vector<double> tokens_per_expert_per_step;
  // The busiest expert of any layer over the mean expert's load: 1 is a perfect balance.
  double load_max_over_mean = 0;
  // Routed tokens left uncomputed: 0, since there is no capacity factor.
  int64_t dropped_tokens = 0;
  bool present() const { return experts > 0; }
};

struct Result {
  std::string schema = kResultSchema;
  RunStatus status = RunStatus::kOk;
  std::string error;
  std::string oom_cause;    // status oom: what failed to allocate (torch_support/compat.h)
  std::string requirement;  // status skipped: what the machine or build lacks (common/errors.h)
  std::string source;       // where a published figure comes from
  ResolvedBenchmark benchmark;
  std::string model_reference;
  std::string optimizer;       // the recipe in words ("AdamW betas (0.9, 0.999), ...")
  std::string optimizer_impl;  // "fused" or "foreach"; empty when not trained
  std::string model_family;
  std::vector<int64_t> input_shape;
  // A transformer's width (hidden size), its blocks and vocabulary as the model declares them
  // (whole, whatever --blocks built): what `gpubench scale` sizes tensor-parallel all-reduces
  // with. 0: not a transformer.
  int64_t model_hidden_size = 0;
  int64_t model_blocks = 0;
  int64_t model_vocab = 0;
  // One of those blocks' parameters, counted by rule: what `gpubench scale --shard` gathers and
  // reduce-scatters a block at a time. 0: no repeated blocks declared.
  int64_t model_block_params = 0;
  // What a tensor-parallel rank splits, with its count (the model's declaration): the run's rule
  // (why_not_tensor_split), which `scale --tensor-parallel` applies to the ranks it predicts for.
  // Empty: the model does not shard; nullopt: an older result that does not say.
  std::optional<TensorParallelSplits> model_tensor_parallel_splits;
  int64_t params = 0;
  int64_t trainable_params = 0;  // params less the frozen ones (LoRA's base model)
  Metrics metrics;
  BatchSearchInfo batch_search;  // --batch-size max
  ProfileInfo profile;           // --profile
  StepTimelineInfo timeline;     // training runs
  DistributedInfo distributed;
  ExpertsInfo experts;
  SystemInfo system;
  TelemetryReport telemetry;
  DatasheetInfo datasheet;
  std::string started_at;  // RFC 3339 (written in UTC)
  double duration_s = 0;
  std::string loaded_from;  // the file it was read from (read_result_file); not written
};

nlohmann::json result_to_json(const Result& result);
// Throws UsageError for a document of another schema family or an unknown major version.
Result result_from_json(const nlohmann::json& document);

Result read_result_file(const std::string& path);  // throws UsageError
// The same from the file's JSON, already read (errors name `path`).
Result result_from_file_json(const nlohmann::json& document, const std::string& path);
// What a child process left at `path`: nothing when there is no file or it cannot be read
// (logged as a warning).
std::optional<Result> read_result_if_present(const std::string& path);

// "2026-11-29T16:40:21Z"
std::string utc_timestamp_now();
// The current UTC time through strftime's `format`.
std::string utc_time_text(const char* format);

// A result with the benchmark and what is known before it runs: its planned placement (world
// size, and with several ranks gpubench's launcher and the device's backend), its start time.
// Model facts and the system block are filled in by whoever knows them (train/).
Result planned_result(const ResolvedBenchmark& benchmark);

}  // namespace gpubench
