// The benchmark's settings by concern (settings/benchmark_settings.def): a struct per section,
// of which a benchmark (settings/benchmark.h) is made. What a model is built with takes the
// sections it needs (ModelOptions, modeling/model_registry.h), not the whole benchmark.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "settings/setting_values.h"

namespace gpubench {

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

// The sections a model is built from (ModelOptions, modeling/model_registry.h).
using SequenceSettings = SequenceSection<Decided>;
using DetectionSettings = DetectionSection<Decided>;
using FineTuningSettings = FineTuningSection<Decided>;

}  // namespace gpubench
