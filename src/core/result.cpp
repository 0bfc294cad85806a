#include "gpubench/result.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "gpubench/log.h"

#include "gpubench/enum_names.h"
#include "gpubench/errors.h"

namespace gpubench {
namespace {

const EnumNames<RunStatus> kStatuses = {{RunStatus::kOk, "ok"},
                                        {RunStatus::kFailed, "failed"},
                                        {RunStatus::kOom, "oom"},
                                        {RunStatus::kSkipped, "skipped"},
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
  const BenchmarkSpec& s = r.spec;
  nlohmann::json benchmark = {
      {"model", s.model},
      {"model_family", r.model_family},
      {"model_reference", r.model_reference},
      {"precision", to_string(s.precision)},
      {"device", to_string(s.device)},
      {"gpus", s.gpus},
      {"batch_size_per_device", s.batch_size},
      {"global_batch_size", s.batch_size * s.gpus},
      {"warmup_steps", s.warmup_steps},
      {"steps", s.steps},
      {"repeat", s.repeat},
      {"seed", s.seed},
      {"channels_last", s.channels_last.value_or(false)},
      {"threads", s.threads},
      {"bucket_mb", s.bucket_mb},
      {"input_shape", r.input_shape},
      {"params", r.params},
      {"optimizer", "SGD momentum 0.9, weight decay 1e-4"},
      {"data", "synthetic, generated once on the device; no input pipeline is measured"}};
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
  if (s.tgt_len > 0) {
    document["benchmark"]["tgt_len"] = s.tgt_len;
    document["benchmark"]["mem_len"] = s.mem_len;
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
    r.spec.model = b.at("model").get<std::string>();
    r.model_family = b.value("model_family", "");
    r.model_reference = b.value("model_reference", "");
    r.optimizer_impl = b.value("optimizer_impl", "");
    r.spec.precision = parse_precision(b.at("precision").get<std::string>());
    r.spec.device = parse_device(b.value("device", "auto"));
    r.spec.gpus = b.value("gpus", 1);
    r.spec.batch_size = b.value("batch_size_per_device", int64_t{0});
    r.spec.warmup_steps = b.value("warmup_steps", 0);
    r.spec.steps = b.value("steps", 0);
    r.spec.repeat = b.value("repeat", 0);
    r.spec.seed = b.value("seed", uint64_t{0});
    r.spec.channels_last = b.value("channels_last", false);
    r.spec.threads = b.value("threads", 0);
    r.spec.tgt_len = b.value("tgt_len", int64_t{0});
    r.spec.mem_len = b.value("mem_len", int64_t{0});
    r.spec.bucket_mb = b.value("bucket_mb", 25);
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
    const auto d = document.value("distributed", nlohmann::json::object());
    r.distributed.world_size = d.value("world_size", r.spec.gpus);
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

void write_json_atomically(const std::string& path, const nlohmann::json& document) {
  write_text_atomically(path, document.dump(2) + "\n");
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  std::FILE* file = std::fopen(temporary.c_str(), "w");
  if (file == nullptr) {
    throw UsageError("cannot write '" + temporary + "': " + std::strerror(errno));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size() &&
                       std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  const int write_errno = errno;
  std::fclose(file);
  if (!written) {
    std::remove(temporary.c_str());
    throw std::runtime_error("writing '" + temporary + "' failed: " + std::strerror(write_errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw UsageError("cannot write '" + path + "': " + reason);
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

}  // namespace gpubench
