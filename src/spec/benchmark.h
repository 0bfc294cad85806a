// What to measure. A BenchmarkRequest holds what the user said (flags, a suite entry), with every
// setting optional; resolving it (run/resolve_benchmark.h) gives a ResolvedBenchmark with every
// setting decided, which is what runs, what a child process receives and what a result records.
// Each setting is described once, in spec/benchmark_fields.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

enum class Precision { kFp32, kTf32, kFp16, kBf16 };
enum class DeviceKind { kAuto, kCuda, kCpu };
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
std::vector<std::string> precision_names();          // in order: fp32, tf32, fp16, bf16
std::vector<std::string> device_names();
std::vector<std::string> mode_names();
std::vector<std::string> tuning_names();
std::vector<std::string> task_names();

// The collective backend data parallelism uses on a device: NCCL on CUDA, Gloo on the CPU.
std::string collective_backend_for(DeviceKind device);

// batch_size `max`: the largest batch that trains, found before the run (docs/memory.md).
inline constexpr int64_t kSearchBatchSize = -1;

struct BenchmarkRequest {
  std::optional<std::string> model;
  std::optional<Precision> precision;
  std::optional<DeviceKind> device;
  std::optional<int> gpus;
  std::optional<int64_t> batch_size;
  std::optional<int> warmup_steps;
  std::optional<int> steps;
  std::optional<int> repeat;
  std::optional<int64_t> seed;
  std::optional<bool> channels_last;
  std::optional<int64_t> tgt_len;
  std::optional<int64_t> mem_len;
  std::optional<int> threads;
  std::optional<int> bucket_mb;
  std::optional<int> timeout_s;
  std::optional<Mode> mode;
  std::optional<int> telemetry_interval_ms;
  std::optional<int64_t> seq_len;
  std::optional<Tuning> tuning;
  std::optional<int> lora_rank;
  std::optional<int> lora_alpha;
  std::optional<std::string> lora_targets;
  std::optional<bool> activation_checkpointing;
  std::optional<int64_t> memory_limit;
  std::optional<Task> task;
  std::optional<int64_t> prompt_len;
  std::optional<int64_t> gen_len;
  std::optional<bool> deterministic;

  bool operator==(const BenchmarkRequest& other) const;
};

// Every setting decided: no "auto" device, every default filled in. Built by resolve() or read
// back from JSON (benchmark_from_json); the value-initialised members below are not defaults.
struct ResolvedBenchmark {
  std::string model;
  Precision precision = Precision::kFp32;
  DeviceKind device = DeviceKind::kCpu;
  int gpus = 0;            // data-parallel ranks in all (devices; CPU ranks with device cpu)
  int64_t batch_size = 0;  // per device
  int warmup_steps = 0;
  int steps = 0;
  int repeat = 0;
  int64_t seed = 0;
  bool channels_last = false;
  int64_t tgt_len = 0;  // language models only; 0 for the others
  int64_t mem_len = 0;
  int threads = 0;    // CPU intra-op threads per rank
  int bucket_mb = 0;  // gradient all-reduce bucket size (DDP's bucket_cap_mb)
  int timeout_s = 0;  // how long a rank waits for its peers
  Mode mode = Mode::kEager;
  int telemetry_interval_ms = 0;  // power and clock sampling; 0: off
  int64_t seq_len = 0;            // the fine-tuning models only; 0 for the others
  Tuning tuning = Tuning::kFull;
  int lora_rank = 0;  // LoRA's adapters; 0 and empty for full tuning
  int lora_alpha = 0;
  std::string lora_targets;  // "q,k,v,o" (projection roles, the model's order) or "all-linear"
  bool activation_checkpointing = false;
  int64_t memory_limit = 0;  // bytes of tensors a device may hold; 0: no limit but the device's
  Task task = Task::kTrain;
  int64_t prompt_len = 0;      // infer, models that generate: prompt tokens; 0 for the others
  int64_t gen_len = 0;         // and tokens generated after it
  bool deterministic = false;  // cuDNN's deterministic algorithms, no autotuning

  bool operator==(const ResolvedBenchmark& other) const;
  bool operator!=(const ResolvedBenchmark& other) const { return !(*this == other); }
};

}  // namespace gpubench
