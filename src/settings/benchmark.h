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

#include "settings/setting_sections.h"
#include "settings/setting_values.h"

namespace gpubench {

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
