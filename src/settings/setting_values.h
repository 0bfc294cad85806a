// The values a benchmark's settings take (precision, device, mode, tuning, task), their names
// and the rules on them that `scale` shares with the run; what needs only these includes this
// header, not the benchmark's (settings/benchmark.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpubench {

// fp8: the linear layers' matmuls in FP8 (docs/fp8.md), everything else in bf16.
enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8 };
// The bytes of an element in the precision's compute dtype: float32 for fp32 and tf32, 16 bits
// for the others (fp8 computes in bf16 outside its linear layers' products).
inline int64_t compute_element_bytes(Precision precision) {
  return precision == Precision::kFp32 || precision == Precision::kTf32 ? 4 : 2;
}
// kCpu first: what a value-initialised ResolvedBenchmark holds.
enum class DeviceKind { kCpu, kCuda, kAuto };
// eager: every kernel launched from the host each step; graph: the whole step captured once in
// a CUDA graph and replayed (BIZON's "XLA" columns are the compiled-graph analogue).
enum class Mode { kEager, kGraph };
// Which parameters train (docs/fine-tuning.md): every one, or low-rank adapters (LoRA) on a
// frozen model, whose linear weights QLoRA holds in 4-bit NF4.
enum class Tuning { kFull, kLora, kQlora };
// LoRA's adapters train: lora and qlora.
inline bool uses_lora(Tuning tuning) {
  return tuning == Tuning::kLora || tuning == Tuning::kQlora;
}
// What is measured: a training step, or inference (docs/inference.md): forward passes as served,
// and text generation for the models that generate.
enum class Task { kTrain, kInfer };

std::string to_string(Precision precision);
std::string to_string(DeviceKind device);
std::string to_string(Mode mode);
std::string to_string(Tuning tuning);
std::string to_string(Task task);

// Expert parallelism's rule, one definition for the run (resolve) and for `scale`'s predictions:
// each of `ranks` holds the same number of whole experts of `model`'s `experts`. Empty when it
// holds, else why not.
std::string why_not_expert_split(int ranks, int64_t experts, const std::string& model);
// What a tensor-parallel rank splits, each named with its count ("key/value heads", 8); the first
// bounds the ranks.
using TensorParallelSplits = std::vector<std::pair<std::string, int64_t>>;
// Tensor parallelism's rule on the model, one definition for the run and for `scale`: each of
// `ranks` holds whole parts of every split (at most the first's count, and dividing every
// count). Empty when it holds or when `ranks` is 1, else why not; `splits` empty: the model does
// not shard, said by the caller.
std::string why_not_tensor_split(int ranks, const TensorParallelSplits& splits,
                                 const std::string& model);
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

// The batch_size setting's bound (its row in settings/benchmark_settings.def), for what may not
// read the plan (fit's model of a peak, memory/fit_prediction.h).
int64_t largest_batch_size();

}  // namespace gpubench
