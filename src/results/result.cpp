#include "results/result.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "common/log.h"

#include "common/enum_names.h"
#include "common/errors.h"
#include "spec/benchmark_fields.h"

namespace gpubench {
namespace {

const EnumNames<RunStatus> kStatuses = {{RunStatus::kOk, "ok"},
                                        {RunStatus::kFailed, "failed"},
                                        {RunStatus::kOom, "oom"},
                                        {RunStatus::kPublished, "published"}};

nlohmann::json summary_to_json(const Summary& s) {
  return {{"median", s.median}, {"mean", s.mean}, {"p5", s.p5},  {"p95", s.p95},
          {"stdev", s.stdev},   {"min", s.min},   {"max", s.max}};
}

Summary summary_from_json(const nlohmann::json& j) {
  Summary s;
  s.median = j.value("median", 0.0);
  s.mean = j.value("mean", 0.0);
  s.p5 = j.value("p5", 0.0);
  s.p95 = j.value("p95", 0.0);
  s.stdev = j.value("stdev", 0.0);
  s.min = j.value("min", 0.0);
  s.max = j.value("max", 0.0);
  return s;
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
  benchmark.update({{"model_family", r.model_family},
                    {"model_reference", r.model_reference},
                    {"global_batch_size", s.batch_size * s.gpus},
                    {"input_shape", r.input_shape},
                    {"params", r.params},
                    {"optimizer", "SGD momentum 0.9, weight decay 1e-4"},
                    {"data",
                     "synthetic, generated once on the device; no input pipeline is "
                     "measured"}});
  const Metrics& m = r.metrics;
  nlohmann::json metrics = {{"throughput", m.throughput},
                            {"throughput_unit", m.throughput_unit},
                            {"per_device_throughput", m.per_device_throughput},
                            {"step_time_ms", summary_to_json(m.step_time_ms)},
                            {"trials", m.trials},
                            {"peak_memory_bytes", m.peak_memory_bytes},
                            {"peak_memory_source", m.peak_memory_source},
                            {"forward_flops_per_sample", m.forward_flops_per_sample},
                            {"train_flops_per_step", m.train_flops_per_step},
                            {"achieved_tflops", m.achieved_tflops},
                            {"final_loss", m.final_loss},
                            {"skipped_steps", m.skipped_steps}};
  const DistributedInfo& d = r.distributed;
  nlohmann::json distributed = {
      {"world_size", d.world_size},
      {"nodes", d.nodes},
      {"backend", d.backend},
      {"launcher", d.launcher},
      {"gradient_sync", d.world_size > 1 ? "bucketed all-reduce started from gradient hooks, "
                                           "overlapping backward (DDP's scheme)"
                                         : "none"},
      {"buckets", d.buckets},
      {"gradient_bytes", d.gradient_bytes},
      {"exposed_communication_ms", d.exposed_communication_ms},
      {"exposed_communication_share", d.exposed_communication_share}};
  nlohmann::json document = {{"schema", r.schema},         {"status", to_string(r.status)},
                             {"benchmark", benchmark},     {"metrics", metrics},
                             {"distributed", distributed}, {"system", r.system},
                             {"started_at", r.started_at}, {"duration_s", r.duration_s}};
  if (!r.optimizer_impl.empty()) document["benchmark"]["optimizer_impl"] = r.optimizer_impl;
  if (r.metrics.graph_capture_ms > 0) {
    document["metrics"]["graph_capture_ms"] = r.metrics.graph_capture_ms;
  }
  if (r.metrics.sequences_per_second > 0) {
    document["metrics"]["sequences_per_second"] = r.metrics.sequences_per_second;
  }
  if (!has_throughput(r.status)) document["error"] = r.error;
  if (!r.source.empty()) document["source"] = r.source;
  return document;
}

Result result_from_json(const nlohmann::json& document) {
  if (!document.is_object()) throw UsageError("a result file must hold a JSON object");
  const std::string schema = document.value("schema", "");
  if (schema.rfind("gpubench.result/", 0) != 0) {
    throw UsageError("not a gpubench result (schema '" + schema + "')");
  }
  // Same major version: readable (a minor version only adds fields, which are ignored here).
  const std::string version = schema.substr(std::string("gpubench.result/").size());
  const std::string major = version.substr(0, version.find('.'));
  if (major != "1") {
    const bool numeric = !major.empty() && std::all_of(major.begin(), major.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    const bool newer = numeric && (major.size() > 1 || major > "1");
    throw UsageError("result schema '" + schema + "' is " +
                     (newer
                          ? "newer than this gpubench reads (gpubench.result/1.x); upgrade gpubench"
                          : "not one this gpubench reads (gpubench.result/1.x)"));
  }
  try {
    Result r;
    r.schema = schema;
    r.status = parse_run_status(document.at("status").get<std::string>());
    r.error = document.value("error", "");
    r.source = document.value("source", "");
    const auto& b = document.at("benchmark");
    if (!b.contains("model") || !b.contains("precision")) {
      throw UsageError("malformed result: the benchmark has no model or precision");
    }
    r.benchmark = benchmark_from_json(b);
    r.model_family = b.value("model_family", "");
    r.model_reference = b.value("model_reference", "");
    r.optimizer_impl = b.value("optimizer_impl", "");
    r.input_shape = b.value("input_shape", std::vector<int64_t>{});
    r.params = b.value("params", int64_t{0});
    const auto& m = document.at("metrics");
    r.metrics.throughput = m.value("throughput", 0.0);
    r.metrics.throughput_unit = m.value("throughput_unit", "");
    r.metrics.per_device_throughput = m.value("per_device_throughput", 0.0);
    r.metrics.step_time_ms = summary_from_json(m.value("step_time_ms", nlohmann::json::object()));
    r.metrics.trials = m.value("trials", std::vector<double>{});
    r.metrics.peak_memory_bytes = m.value("peak_memory_bytes", int64_t{0});
    r.metrics.peak_memory_source = m.value("peak_memory_source", "");
    r.metrics.forward_flops_per_sample = m.value("forward_flops_per_sample", int64_t{0});
    r.metrics.train_flops_per_step = m.value("train_flops_per_step", int64_t{0});
    r.metrics.achieved_tflops = m.value("achieved_tflops", 0.0);
    r.metrics.final_loss = m.value("final_loss", 0.0);
    r.metrics.skipped_steps = m.value("skipped_steps", int64_t{0});
    r.metrics.sequences_per_second = m.value("sequences_per_second", 0.0);
    r.metrics.graph_capture_ms = m.value("graph_capture_ms", 0.0);
    const auto d = document.value("distributed", nlohmann::json::object());
    r.distributed.world_size = d.value("world_size", r.benchmark.gpus);
    r.distributed.nodes = d.value("nodes", 1);
    r.distributed.backend = d.value("backend", "none");
    r.distributed.launcher = d.value("launcher", "none");
    r.distributed.buckets = d.value("buckets", 0);
    r.distributed.gradient_bytes = d.value("gradient_bytes", int64_t{0});
    r.distributed.exposed_communication_ms = d.value("exposed_communication_ms", 0.0);
    r.distributed.exposed_communication_share = d.value("exposed_communication_share", 0.0);
    r.system = document.value("system", nlohmann::json::object()).get<SystemInfo>();
    r.started_at = document.value("started_at", "");
    r.duration_s = document.value("duration_s", 0.0);
    return r;
  } catch (const nlohmann::json::exception& error) {
    throw UsageError(std::string("malformed result: ") + error.what());
  }
}

Result read_result_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read result file '" + path + "'");
  nlohmann::json document;
  try {
    in >> document;
  } catch (const nlohmann::json::parse_error& error) {
    throw UsageError("'" + path + "' is not valid JSON: " + error.what());
  }
  try {
    return result_from_json(document);
  } catch (const UsageError& error) {
    throw UsageError("'" + path + "': " + error.what());
  }
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
  if (benchmark.gpus > 1) {
    d.launcher = "gpubench";
    d.backend = collective_backend_for(benchmark.device);
  }
  return result;
}

}  // namespace gpubench
