#include "settings/setting_values.h"

#include "common/enum_names.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

const EnumNames<Precision> kPrecisions = {{Precision::kFp32, "fp32"},
                                          {Precision::kTf32, "tf32"},
                                          {Precision::kFp16, "fp16"},
                                          {Precision::kBf16, "bf16"},
                                          {Precision::kFp8, "fp8"}};

const EnumNames<DeviceKind> kDevices = {
    {DeviceKind::kAuto, "auto"}, {DeviceKind::kCuda, "cuda"}, {DeviceKind::kCpu, "cpu"}};

const EnumNames<Mode> kModes = {{Mode::kEager, "eager"}, {Mode::kGraph, "graph"}};

const EnumNames<Tuning> kTunings = {
    {Tuning::kFull, "full"}, {Tuning::kLora, "lora"}, {Tuning::kQlora, "qlora"}};

const EnumNames<Task> kTasks = {{Task::kTrain, "train"}, {Task::kInfer, "infer"}};

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

std::string why_not_expert_split(int ranks, int64_t experts, const std::string& model) {
  if (ranks >= 1 && experts > 0 && experts % ranks == 0) return "";
  return "expert_parallel " + std::to_string(ranks) + " does not divide " + model + "'s " +
         std::to_string(experts) + " experts: each rank holds the same number of whole experts";
}

std::string why_not_tensor_split(int ranks, const TensorParallelSplits& splits,
                                 const std::string& model) {
  if (ranks == 1 || splits.empty()) return "";
  const std::string given = "tensor_parallel " + std::to_string(ranks);
  const auto& [bound_name, bound] = splits.front();
  if (ranks > bound) {
    return given + " is more than " + model + "'s " + std::to_string(bound) + " " + bound_name +
           ": each rank holds whole " + bound_name + " (at most " + std::to_string(bound) + ")";
  }
  for (const auto& [what, size] : splits) {
    if (size % ranks != 0) {
      return given + " does not divide " + model + "'s " + std::to_string(size) + " " + what;
    }
  }
  return "";
}

int64_t largest_batch_size() {
  return find_benchmark_field("batch_size")->max;
}

}  // namespace gpubench
