#include "spec/benchmark.h"

#include <tuple>

#include "common/enum_names.h"

namespace gpubench {
namespace {

const EnumNames<Precision> kPrecisions = {{Precision::kFp32, "fp32"},
                                          {Precision::kTf32, "tf32"},
                                          {Precision::kFp16, "fp16"},
                                          {Precision::kBf16, "bf16"}};

const EnumNames<DeviceKind> kDevices = {
    {DeviceKind::kAuto, "auto"}, {DeviceKind::kCuda, "cuda"}, {DeviceKind::kCpu, "cpu"}};

const EnumNames<Mode> kModes = {{Mode::kEager, "eager"}, {Mode::kGraph, "graph"}};

const EnumNames<Tuning> kTunings = {{Tuning::kFull, "full"}, {Tuning::kLora, "lora"}};

const EnumNames<Task> kTasks = {{Task::kTrain, "train"}, {Task::kInfer, "infer"}};

template <typename T>
auto fields_of(const T& b) {
  return std::tie(b.model, b.precision, b.device, b.gpus, b.batch_size, b.warmup_steps, b.steps,
                  b.repeat, b.seed, b.channels_last, b.tgt_len, b.mem_len, b.threads, b.bucket_mb,
                  b.timeout_s, b.mode, b.telemetry_interval_ms, b.seq_len, b.tuning, b.lora_rank,
                  b.lora_alpha, b.lora_targets, b.activation_checkpointing, b.memory_limit, b.task,
                  b.prompt_len, b.gen_len, b.deterministic);
}

}  // namespace

std::string to_string(Precision precision) {
  return name_of(kPrecisions, precision);
}
std::string to_string(DeviceKind device) {
  return name_of(kDevices, device);
}
std::string to_string(Mode mode) {
  return name_of(kModes, mode);
}
std::string to_string(Tuning tuning) {
  return name_of(kTunings, tuning);
}
std::string to_string(Task task) {
  return name_of(kTasks, task);
}
Task parse_task(const std::string& text) {
  return parse_name(kTasks, text, "task");
}
std::vector<std::string> task_names() {
  return names_of(kTasks);
}
Tuning parse_tuning(const std::string& text) {
  return parse_name(kTunings, text, "tuning");
}
std::vector<std::string> tuning_names() {
  return names_of(kTunings);
}
Mode parse_mode(const std::string& text) {
  return parse_name(kModes, text, "mode");
}
std::vector<std::string> mode_names() {
  return names_of(kModes);
}
Precision parse_precision(const std::string& text) {
  return parse_name(kPrecisions, text, "precision");
}
DeviceKind parse_device(const std::string& text) {
  return parse_name(kDevices, text, "device");
}
std::vector<std::string> precision_names() {
  return names_of(kPrecisions);
}
std::vector<std::string> device_names() {
  return names_of(kDevices);
}

std::string collective_backend_for(DeviceKind device) {
  return device == DeviceKind::kCuda ? "nccl" : "gloo";
}

bool BenchmarkRequest::operator==(const BenchmarkRequest& other) const {
  return fields_of(*this) == fields_of(other);
}

bool ResolvedBenchmark::operator==(const ResolvedBenchmark& other) const {
  return fields_of(*this) == fields_of(other);
}

}  // namespace gpubench
