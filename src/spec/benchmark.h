// What to measure. A BenchmarkRequest holds what the user said (flags, a suite entry), with every
// setting optional; resolving it (run/resolve_benchmark.h) gives a ResolvedBenchmark with every
// setting decided, which is what runs, what a child process receives and what a result records.
// Each setting is defined once, in spec/benchmark_settings.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

// fp8: the linear layers' matmuls in FP8 (docs/fp8.md), everything else in bf16.
enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8 };
// kCpu first: what a value-initialised ResolvedBenchmark holds.
enum class DeviceKind { kCpu, kCuda, kAuto };
// eager: every kernel launched from the host each step; graph: the whole step captured once in
// a CUDA graph and replayed (BIZON's "XLA" columns are the compiled-graph analogue).
enum class Mode { kEager, kGraph };
// Which parameters train (docs/fine-tuning.md): every one, or low-rank adapters (LoRA) on a
// frozen model.
enum class Tuning { kFull, kLora };
// What is measured: a training step, or inference (docs/inference.md): forward passes as served,
// and text generation for the models that generate.
enum class Task { kTrain, kInfer };

std::string to_string(Precision precision);
std::string to_string(DeviceKind device);
std::string to_string(Mode mode);
std::string to_string(Tuning tuning);
std::string to_string(Task task);
Precision parse_precision(const std::string& text);  // throws UsageError
DeviceKind parse_device(const std::string& text);    // throws UsageError
Mode parse_mode(const std::string& text);            // throws UsageError
Tuning parse_tuning(const std::string& text);        // throws UsageError
Task parse_task(const std::string& text);            // throws UsageError
std::vector<std::string> precision_names();          // in order: fp32, tf32, fp16, bf16, fp8
std::vector<std::string> device_names();
std::vector<std::string> mode_names();
std::vector<std::string> tuning_names();
std::vector<std::string> task_names();

// The collective backend data parallelism uses on a device: NCCL on CUDA, Gloo on the CPU.
std::string collective_backend_for(DeviceKind device);

// batch_size `max`: the largest batch that trains, found before the run (docs/memory.md).
inline constexpr int64_t kSearchBatchSize = -1;

// What the user asked for: every setting of spec/benchmark_settings.def, each optional.
struct BenchmarkRequest {
#define GPUBENCH_SETTING(member, type, ...) std::optional<type> member;
#include "spec/benchmark_settings.def"
#undef GPUBENCH_SETTING

  bool operator==(const BenchmarkRequest& other) const;
  bool operator!=(const BenchmarkRequest& other) const {
    return !(*this == other);
  }
};

// Every setting decided: no "auto" device, every default filled in. Built by resolve() or read
// back from JSON (benchmark_from_json); the value-initialised members (0, empty, false, the
// first enumerator) are not defaults: spec/benchmark_settings.def gives those.
struct ResolvedBenchmark {
#define GPUBENCH_SETTING(member, type, ...) type member{};
#include "spec/benchmark_settings.def"
#undef GPUBENCH_SETTING

  bool operator==(const ResolvedBenchmark& other) const;
  bool operator!=(const ResolvedBenchmark& other) const {
    return !(*this == other);
  }
};

}  // namespace gpubench
