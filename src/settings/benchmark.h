// What to measure. A BenchmarkRequest holds what the user said (flags, a suite entry), with every
// setting optional; resolving it (run/resolve_benchmark.h) gives a ResolvedBenchmark with every
// setting decided, which is what runs, what a child process receives and what a result records.
// Each setting is defined once, in settings/benchmark_settings.def, in one of ten sections.
#pragma once

#include <cstdint>
#include <optional>
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

// The settings' concerns, as torchtitan's configuration has a section per concern: each
// section is a struct of its settings, and a benchmark is made of the eleven. A section's
// condition is written once (setting_sections(), settings/benchmark_fields.h): where it does not
// hold, none of its settings counts in the identity (LoRA's settings outside a LoRA run,
// inference's outside infer).
enum class SettingSection {
  kModel,
  kMeasurement,
  kPrecision,
  kParallelism,
  kSequence,
  kDetection,
  kFineTuning,
  kLora,
  kInference,
  kMemory,
  kObservability,
};

// A section holds Value<type> for each of its settings: std::optional<type> in a request, the
// type itself (Decided<type>) once resolved.
template <typename T>
using Decided = T;

#define GPUBENCH_SECTION_STRUCT(Name, kind)  \
  template <template <typename> class Value> \
  struct Name {                              \
    static constexpr SettingSection kSection = SettingSection::kind;
GPUBENCH_SECTION_STRUCT(ModelSection, kModel)
#define GPUBENCH_KEPT_SECTION_model
#include "settings/section_members.inc"
};
GPUBENCH_SECTION_STRUCT(MeasurementSection, kMeasurement)
#define GPUBENCH_KEPT_SECTION_measurement
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(PrecisionSection, kPrecision)
#define GPUBENCH_KEPT_SECTION_precision
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(ParallelismSection, kParallelism)
#define GPUBENCH_KEPT_SECTION_parallelism
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(SequenceSection, kSequence)
#define GPUBENCH_KEPT_SECTION_sequence
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(DetectionSection, kDetection)
#define GPUBENCH_KEPT_SECTION_detection
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(FineTuningSection, kFineTuning)
#define GPUBENCH_KEPT_SECTION_fine_tuning
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(LoraSection, kLora)
#define GPUBENCH_KEPT_SECTION_lora
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(InferenceSection, kInference)
#define GPUBENCH_KEPT_SECTION_inference
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(MemorySection, kMemory)
#define GPUBENCH_KEPT_SECTION_memory
#include "settings/section_members.inc"
}
;
GPUBENCH_SECTION_STRUCT(ObservabilitySection, kObservability)
#define GPUBENCH_KEPT_SECTION_observability
#include "settings/section_members.inc"
}
;
#undef GPUBENCH_SECTION_STRUCT

template <template <typename> class Value>
struct BenchmarkSections : ModelSection<Value>,
                           MeasurementSection<Value>,
                           PrecisionSection<Value>,
                           ParallelismSection<Value>,
                           SequenceSection<Value>,
                           DetectionSection<Value>,
                           FineTuningSection<Value>,
                           LoraSection<Value>,
                           InferenceSection<Value>,
                           MemorySection<Value>,
                           ObservabilitySection<Value> {};

// The sections a model is built from (ModelOptions, modeling/model_registry.h).
using SequenceSettings = SequenceSection<Decided>;
using DetectionSettings = DetectionSection<Decided>;
using FineTuningSettings = FineTuningSection<Decided>;

// What the user asked for: every setting, each optional.
struct BenchmarkRequest : BenchmarkSections<std::optional> {
  bool operator==(const BenchmarkRequest& other) const;
  bool operator!=(const BenchmarkRequest& other) const { return !(*this == other); }
};

// Every setting decided: no "auto" device, every default filled in. Built by resolve() or read
// back from JSON (benchmark_from_json); the value-initialised members (0, empty, false, the
// first enumerator) are not defaults: settings/benchmark_settings.def gives those.
struct ResolvedBenchmark : BenchmarkSections<Decided> {
  bool operator==(const ResolvedBenchmark& other) const;
  bool operator!=(const ResolvedBenchmark& other) const { return !(*this == other); }
  // --shard grads or full.
  bool sharded() const { return shard == "grads" || shard == "full"; }
  // Runs as ranks of a process group: several, or one that shards over a group of one.
  bool runs_process_group() const { return gpus > 1 || sharded(); }
};

}  // namespace gpubench
