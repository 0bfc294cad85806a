#include "results/result.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>

#include "common/log.h"

#include "common/enum_names.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_fields.h"
#include "results/json_block.h"
#include "results/start_time.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

const EnumNames<RunStatus> kStatuses = {{RunStatus::kOk, "ok"},
                                        {RunStatus::kFailed, "failed"},
                                        {RunStatus::kOom, "oom"},
                                        {RunStatus::kPublished, "published"},
                                        {RunStatus::kSkipped, "skipped"}};

template <typename Io, typename S>
void summary_fields(Io& io, S& s) {
  io.number("median", s.median);
  io.number("mean", s.mean);
  io.number("p5", s.p5);
  io.number("p95", s.p95);
  io.number("stdev", s.stdev);
  io.number("min", s.min);
  io.number("max", s.max);
}

constexpr double kLowest = std::numeric_limits<double>::lowest();
constexpr double kHighest = std::numeric_limits<double>::max();
constexpr int64_t kMaxRanks = 1 << 20;

// [{"of": "key/value heads", "count": 8}, ...], [] where the model does not shard; absent in an
// older result.
std::optional<TensorParallelSplits> splits_from_fields(const JsonFields& fields,
                                                       const std::string& key) {
  if (!fields.has(key)) return std::nullopt;
  TensorParallelSplits splits;
  for (const JsonFields& split : fields.objects(key)) {
    splits.emplace_back(split.text("of"), split.integer("count", 0, 1, int64_t{1} << 30));
    if (splits.back().first.empty()) {
      throw UsageError(key + ": each split names what it splits (\"of\")");
    }
  }
  return splits;
}

nlohmann::json splits_to_json(const std::optional<TensorParallelSplits>& splits) {
  if (!splits) return nullptr;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [what, count] : *splits) list.push_back({{"of", what}, {"count", count}});
  return list;
}

// What the result says of the model and its optimiser, beside the settings in its benchmark
// block. The trainable parameters are at most all of them.
template <typename Io, typename R>
void model_fields(Io& io, R& r) {
  io.text("model_family", r.model_family);
  io.text("model_reference", r.model_reference);
  io.integers("input_shape", r.input_shape);
  io.integer("model_hidden_size", r.model_hidden_size, 0, 0, int64_t{1} << 24,
             Written::kWhenPositive);
  io.integer("model_blocks", r.model_blocks, 0, 0, int64_t{1} << 20, Written::kWhenPositive);
  io.integer("model_vocab", r.model_vocab, 0, 0, int64_t{1} << 30, Written::kWhenPositive);
  io.integer("model_block_params", r.model_block_params, 0, 0, int64_t{1} << 40,
             Written::kWhenPositive);
  io.custom("model_tensor_parallel_splits", r.model_tensor_parallel_splits, splits_from_fields,
            splits_to_json);
  io.integer("params", r.params);
  io.integer("trainable_params", r.trainable_params, r.params, 0, r.params);
  io.text("optimizer", r.optimizer);
  io.text("optimizer_impl", r.optimizer_impl, "", Written::kWhenPositive);
}

// Metrics' figures but the step times, memory and inference blocks (their own readers).
template <typename Io, typename M>
void metrics_fields(Io& io, M& m) {
  io.number("throughput", m.throughput, 0, kMaxThroughput);
  io.text("throughput_unit", m.throughput_unit);
  io.number("per_device_throughput", m.per_device_throughput, 0, kMaxThroughput);
  io.numbers("trials", m.trials, kMaxThroughput);
  io.integer("peak_memory_bytes", m.peak_memory_bytes);
  io.text("peak_memory_source", m.peak_memory_source);
  io.integer("forward_flops_per_sample", m.forward_flops_per_sample);
  io.integer("train_flops_per_step", m.train_flops_per_step);
  io.number("achieved_tflops", m.achieved_tflops);
  io.number("final_loss", m.final_loss, kLowest, kHighest);
  io.integer("skipped_steps", m.skipped_steps);
  io.number("sequences_per_second", m.sequences_per_second, 0, kHighest, Written::kWhenPositive);
  io.number("tokens_per_second", m.tokens_per_second, 0, kHighest, Written::kWhenPositive);
  io.number("graph_capture_ms", m.graph_capture_ms, 0, kHighest, Written::kWhenPositive);
  io.number("fp8_matmul_flop_share", m.fp8_matmul_flop_share, 0, 1, Written::kWhenPositive);
  io.number("achieved_fraction_of_peak", m.achieved_fraction_of_peak, 0, kHighest,
            Written::kWhenPositive);
}

// `gpus`: the world size of an older result without one.
template <typename Io, typename D>
void distributed_fields(Io& io, D& d, int64_t gpus) {
  io.integer("world_size", d.world_size, gpus, 1, kMaxRanks);
  io.integer("nodes", d.nodes, 1, 1, kMaxRanks);
  io.text("backend", d.backend, "none");
  io.text("launcher", d.launcher, "none");
  io.integer("buckets", d.buckets, 0, 0, 1 << 30);
  io.integer("gradient_bytes", d.gradient_bytes, 0, 0, kMaxGradientBytes);
  io.number("exposed_communication_ms", d.exposed_communication_ms);
  io.number("exposed_communication_share", d.exposed_communication_share);
  io.integer("tensor_parallel", d.tensor_parallel, 1, 1, kMaxRanks);
  io.number("tensor_parallel_exposed_ms", d.tensor_parallel_exposed_ms, 0, kHighest,
            Written::kWhenPositive);
  io.number("tensor_parallel_prefill_exposed_ms", d.tensor_parallel_prefill_exposed_ms, 0, kHighest,
            Written::kWhenPositive);
  io.integer("tensor_parallel_collectives", d.tensor_parallel_collectives, 0, 0, int64_t{1} << 40,
             Written::kWhenPositive);
  io.integer("expert_parallel", d.expert_parallel, 1, 1, kMaxRanks);
  io.number("expert_parallel_exposed_ms", d.expert_parallel_exposed_ms, 0, kHighest,
            Written::kWhenPositive);
  io.number("expert_parallel_prefill_exposed_ms", d.expert_parallel_prefill_exposed_ms, 0, kHighest,
            Written::kWhenPositive);
  io.integer("expert_parallel_collectives", d.expert_parallel_collectives, 0, 0, int64_t{1} << 40,
             Written::kWhenPositive);
  io.integer("gathered_bytes", d.gathered_bytes, 0, 0, kMaxGradientBytes, Written::kWhenPositive);
  io.number("exposed_in_passes_ms", d.exposed_in_passes_ms, 0, kHighest, Written::kWhenPositive);
}

// What the database says of the GPU, where one of its entries matched.
template <typename Io, typename DS>
void datasheet_fields(Io& io, DS& ds) {
  io.flag("matched", ds.matched);
  io.text("reason", ds.reason);
  if (!ds.matched) return;
  io.text("entry", ds.entry);
  io.text("peak_quantity", ds.peak_quantity);
  io.number("peak_tflops", ds.peak_tflops);
  io.text("peak_source", ds.peak_source);
  io.number("memory_bandwidth_gbs", ds.memory_bandwidth_gbs);
  io.number("tdp_w", ds.tdp_w);
}

template <typename Io, typename P>
void profile_fields(Io& io, P& p) {
  io.text("trace", p.trace);
  io.text("profiler", p.profiler);
  io.integer("steps", p.steps, 0, 1, 1000000);
  io.number("throughput", p.throughput, 0, kMaxThroughput);
}

template <typename Io, typename E>
void experts_fields(Io& io, E& e) {
  io.integer("experts", e.experts, 0, 1, int64_t{1} << 20);
  io.integer("experts_per_token", e.experts_per_token, 0, 1, e.experts);
  io.integer("active_params", e.active_params);
  io.integer("steps", e.steps);
  io.numbers("tokens_per_expert_per_step", e.tokens_per_expert_per_step, kHighest);
  io.number("load_max_over_mean", e.load_max_over_mean, 0, kHighest);
  io.integer("dropped_tokens", e.dropped_tokens);
}

template <typename Io, typename T>
void timeline_fields(Io& io, T& t) {
  io.text("clock", t.clock);
  io.text("measured_over", t.measured_over);
  io.integer("steps", t.steps, 0, 1, 1000000000);
  io.number("forward_ms", t.forward_ms);
  io.number("backward_ms", t.backward_ms);
  io.number("gradient_sync_ms", t.gradient_sync_ms);
  io.number("optimizer_ms", t.optimizer_ms);
  io.integer("bucket_cap_bytes", t.bucket_cap_bytes, 0, 0, kMaxGradientBytes);
  io.integer("first_bucket_cap_bytes", t.first_bucket_cap_bytes, 0, 0, kMaxGradientBytes);
  io.integers("bucket_bytes", t.bucket_bytes, 0, kMaxGradientBytes);
  io.numbers("bucket_ready_ms", t.bucket_ready_ms, 1e9);
  io.number("overhead_ms", t.overhead_ms);
  io.integers("parameter_blocks", t.parameter_blocks, -1, kMaxModelBlocks - 1,
              Written::kWhenPositive);
  io.integer("model_blocks", t.model_blocks, 0, 0, kMaxModelBlocks, Written::kWhenPositive);
}

}  // namespace

bool has_throughput(RunStatus status) {
  return status == RunStatus::kOk || status == RunStatus::kPublished;
}

std::string to_string(RunStatus status) {
  return name_of(kStatuses, status);
}

RunStatus parse_run_status(const std::string& text) {
  return parse_name(kStatuses, text, "result status");
}

nlohmann::json result_to_json(const Result& r) {
  const ResolvedBenchmark& s = r.benchmark;
  nlohmann::json benchmark = benchmark_to_json(s);
  BlockWriter benchmark_writer(benchmark);
  model_fields(benchmark_writer, r);
  // Derived, for readers of the file; never read back.
  benchmark.update({{"global_batch_size", s.batch_size * s.gpus},
                    {"frozen_params", r.params - r.trainable_params},
                    {"data",
                     "synthetic, generated once on the device; no input pipeline is "
                     "measured"}});
  nlohmann::json metrics = {{"step_time_ms", write_block(summary_fields<BlockWriter, const Summary>,
                                                         r.metrics.step_time_ms)}};
  BlockWriter metrics_writer(metrics);
  metrics_fields(metrics_writer, r.metrics);
  nlohmann::json distributed = {
      {"gradient_sync",
       r.distributed.world_size <= 1 && !s.sharded() ? "none"
       : s.task == Task::kInfer
           ? "none: inference replicas, each serving its own batch; their throughputs summed"
       : s.shard == "full"
           ? "sharded (FSDP2's scheme, ZeRO-3): each block's parameters all-gathered before its "
             "forward and again before its backward, one block ahead; its gradients "
             "reduce-scattered after its backward"
       : s.shard == "grads"
           ? "sharded gradients and optimiser states (ZeRO-2): each block's gradients "
             "reduce-scattered after its backward; the updated parameters all-gathered"
           : "bucketed all-reduce started from gradient hooks, overlapping backward (DDP's "
             "scheme)"}};
  BlockWriter distributed_writer(distributed);
  distributed_fields(distributed_writer, r.distributed, r.benchmark.gpus);
  nlohmann::json document = {{"schema", r.schema},         {"status", to_string(r.status)},
                             {"benchmark", benchmark},     {"metrics", metrics},
                             {"distributed", distributed}, {"system", r.system},
                             {"started_at", r.started_at}, {"duration_s", r.duration_s}};
  if (r.metrics.memory.present()) document["metrics"]["memory"] = memory_to_json(r.metrics.memory);
  if (r.metrics.inference.present) {
    document["metrics"]["inference"] = inference_to_json(r.metrics.inference);
  }
  if (r.batch_search.searched) document["batch_search"] = batch_search_to_json(r.batch_search);
  if (r.profile.present()) {
    document["profile"] = write_block(profile_fields<BlockWriter, const ProfileInfo>, r.profile);
  }
  if (r.experts.present()) {
    document["experts"] = write_block(experts_fields<BlockWriter, const ExpertsInfo>, r.experts);
  }
  if (r.timeline.present()) {
    nlohmann::json timeline =
        write_block(timeline_fields<BlockWriter, const StepTimelineInfo>, r.timeline);
    const double step_ms = r.metrics.step_time_ms.median;
    timeline["overhead_share"] = step_ms > 0 ? r.timeline.overhead_ms / step_ms : 0.0;  // derived
    document["timeline"] = timeline;
  }
  if (r.status != RunStatus::kPublished) {
    document["telemetry"] = telemetry_to_json(r.telemetry);
    nlohmann::json datasheet = nlohmann::json::object();
    BlockWriter datasheet_writer(datasheet);
    datasheet_fields(datasheet_writer, r.datasheet);
    document["datasheet"] = datasheet;
  }
  if (!has_throughput(r.status)) document["error"] = r.error;
  if (r.status == RunStatus::kOom && !r.oom_cause.empty()) document["oom_cause"] = r.oom_cause;
  if (r.status == RunStatus::kSkipped) document["requirement"] = r.requirement;
  if (!r.source.empty()) document["source"] = r.source;
  return document;
}

namespace {

// A measured result's figures hold together: an ok run has its trials, and its throughput is
// their median (as measure_trials makes it), within rounding.
std::string shortest(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

void check_trials_agree(const Result& r) {
  if (r.status != RunStatus::kOk) return;
  const std::vector<double>& trials = r.metrics.trials;
  if (trials.empty()) {
    throw UsageError(
        "metrics.trials is empty in a result with status 'ok': a measured run has "
        "its trials");
  }
  std::vector<double> sorted = trials;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double middle = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  if (std::abs(middle - r.metrics.throughput) > 1e-6 * std::max(middle, r.metrics.throughput)) {
    throw UsageError("metrics.throughput " + shortest(r.metrics.throughput) +
                     " is not the median of metrics.trials (" + shortest(middle) +
                     "): the figures of this result do not hold together");
  }
}

}  // namespace

namespace {

// "gpubench.result/1" or "/1.x": a major version this gpubench reads; throws UsageError for
// another, saying whether it is newer.
std::string checked_schema(const nlohmann::json& document) {
  if (!document.is_object()) throw UsageError("a result file must hold a JSON object");
  const std::string schema = JsonFields(document, "").text("schema");
  if (schema.rfind("gpubench.result/", 0) != 0) {
    throw UsageError("not a gpubench result (schema '" + echoed(schema) + "')");
  }
  // Same major version: readable (a minor version only adds fields, which are ignored here).
  const std::string version = schema.substr(std::string("gpubench.result/").size());
  const std::string major = version.substr(0, version.find('.'));
  // "01" is major version 1, as "1" is.
  const size_t first_digit = major.find_first_not_of('0');
  const std::string trimmed = first_digit == std::string::npos ? "0" : major.substr(first_digit);
  if (major.empty() || trimmed != "1") {
    const bool numeric = !major.empty() && std::all_of(major.begin(), major.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    const bool newer = numeric && (trimmed.size() > 1 || trimmed > "1");
    throw UsageError("result schema '" + echoed(schema) + "' is " +
                     (newer
                          ? "newer than this gpubench reads (gpubench.result/1.x); upgrade gpubench"
                          : "not one this gpubench reads (gpubench.result/1.x)"));
  }
  return schema;
}

void read_benchmark_block(const JsonFields& top, Result& r) {
  const JsonFields b = top.object("benchmark");
  if (!b.has("model") || !b.has("precision")) {
    throw UsageError("malformed result: the benchmark has no model or precision");
  }
  r.benchmark = benchmark_from_json(top.raw("benchmark"));
  BlockReader reader(b);
  model_fields(reader, r);
}

void read_metrics(const JsonFields& m, Result& r) {
  BlockReader reader(m);
  metrics_fields(reader, r.metrics);
  if (has_throughput(r.status) && !(r.metrics.throughput > 0)) {
    throw UsageError("metrics.throughput must be above 0 in a result with status '" +
                     to_string(r.status) + "', got " + echoed(m.raw("throughput")));
  }
  read_block(m.object("step_time_ms"), summary_fields<BlockReader, Summary>,
             r.metrics.step_time_ms);
  check_trials_agree(r);
  r.metrics.memory = memory_from_json(m.raw("memory"));
  r.metrics.inference = inference_from_json(m.raw("inference"));
}

}  // namespace

// Every field is checked where it is read (common/json_fields.h): a result is input like any
// other, and a wrong value must not reach a report as "x-4" or "nan%".
Result result_from_json(const nlohmann::json& document) {
  Result r;
  r.schema = checked_schema(document);
  const JsonFields top(document, "");
  r.status = parse_run_status(top.text("status"));
  r.error = top.text("error");
  r.oom_cause = top.text("oom_cause");
  r.requirement = top.text("requirement");
  r.source = top.text("source");
  read_benchmark_block(top, r);
  read_metrics(top.object("metrics"), r);
  r.batch_search = batch_search_from_json(top.raw("batch_search"));
  if (top.has("timeline")) {
    read_block(top.object("timeline"), timeline_fields<BlockReader, StepTimelineInfo>, r.timeline);
    if (r.timeline.bucket_bytes.size() != r.timeline.bucket_ready_ms.size()) {
      throw UsageError("timeline.bucket_bytes and timeline.bucket_ready_ms must be as long");
    }
    int64_t gradient_bytes = 0;  // each at most kMaxGradientBytes: the check cannot overflow
    for (const int64_t bytes : r.timeline.bucket_bytes) {
      if (bytes > kMaxGradientBytes - gradient_bytes) {
        throw UsageError("timeline.bucket_bytes add up to more than " +
                         std::to_string(kMaxGradientBytes) + " bytes (1 PiB), more than any model");
      }
      gradient_bytes += bytes;
    }
  }
  if (top.has("profile")) {
    read_block(top.object("profile"), profile_fields<BlockReader, ProfileInfo>, r.profile);
    if (!r.profile.present()) throw UsageError("profile.trace must name the trace file");
  }
  if (top.has("experts")) {
    read_block(top.object("experts"), experts_fields<BlockReader, ExpertsInfo>, r.experts);
  }
  BlockReader distributed(top.object("distributed"));
  distributed_fields(distributed, r.distributed, r.benchmark.gpus);
  r.system = top.raw("system").get<SystemInfo>();  // absent: null, read as an empty object
  r.telemetry = telemetry_from_json(top.raw("telemetry"));
  BlockReader datasheet(top.object("datasheet"));
  datasheet_fields(datasheet, r.datasheet);
  r.started_at = top.text("started_at");
  if (!r.started_at.empty() && !parse_rfc3339_us(r.started_at)) {
    throw UsageError("started_at '" + echoed(r.started_at) +
                     "' is not an RFC 3339 date-time such as 2026-11-30T02:00:00Z");
  }
  r.duration_s = top.number("duration_s");
  return r;
}

Result read_result_file(const std::string& path) {
  return result_from_file_json(read_json_input_file(path, "result file"), path);
}

Result result_from_file_json(const nlohmann::json& document, const std::string& path) {
  Result result;
  try {
    result = result_from_json(document);
  } catch (const UsageError& error) {
    throw UsageError("'" + echoed(path) + "': " + error.what());
  }
  result.loaded_from = path;
  const auto started = parse_rfc3339_us(result.started_at);
  const auto now_us = static_cast<int64_t>(std::time(nullptr)) * 1000000;
  if (started && *started > now_us + int64_t{86400} * 1000000) {
    log::warn(
        "'{}': started_at {} is more than a day in the future; its clock or its file is "
        "wrong, and it sorts after every run until then",
        echoed(path), echoed(result.started_at));
  }
  return result;
}

std::optional<Result> read_result_if_present(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return read_result_file(path);
  } catch (const std::exception& error) {
    log::warn("unreadable result '{}': {}", path, error.what());
    return std::nullopt;
  }
}

std::string utc_time_text(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  std::strftime(text, sizeof(text), format, &utc);
  return text;
}

std::string utc_timestamp_now() {
  return utc_time_text("%Y-%m-%dT%H:%M:%SZ");
}

Result planned_result(const ResolvedBenchmark& benchmark) {
  Result result;
  result.benchmark = benchmark;
  result.started_at = utc_timestamp_now();
  DistributedInfo& d = result.distributed;
  d.world_size = benchmark.gpus;
  d.tensor_parallel = benchmark.tensor_parallel;
  d.expert_parallel = benchmark.expert_parallel;
  if (benchmark.runs_process_group()) {
    d.launcher = "gpubench";
    d.backend = collective_backend_for(benchmark.device);
  }
  return result;
}

}  // namespace gpubench
