#include "features/memory_terms.h"

#include "features/parallelism/parallelism_memory.h"
#include "features/precision/precision_memory.h"
#include "features/tuning/tuning_memory.h"

namespace gpubench {
namespace {

struct MemoryTermStep {
  const char* owner;   // the model, or the feature whose term it is
  const char* counts;  // what it adds or changes, for the generated reference
  MemoryTerm term;
};

const std::vector<MemoryTermStep>& memory_terms() {
  static const std::vector<MemoryTermStep> terms = {
      {"model", "every weight in float32, the trainable weights' gradients, the activations",
       model_memory_term},
      {"tuning", "QLoRA's frozen base in NF4", tuning::qlora_memory_term},
      {"tuning", "LoRA's frozen weights in the compute dtype under bf16 and fp16",
       tuning::lora_memory_term},
      {"precision", "an fp8 LoRA's two FP8 operands of each frozen weight",
       precision::fp8_memory_term},
      {"tuning", "the optimiser's state", tuning::optimizer_memory_term},
      {"parallelism",
       "one rank's share: a model parallelism's slice, sharded states; the host build",
       parallelism::rank_memory_term},
  };
  return terms;
}

}  // namespace

MemoryPlan plan_memory(const ModelStats& stats, const ResolvedBenchmark& benchmark,
                       const ModelInfo& info, const ModelOptions& options) {
  const MemoryPlanInputs inputs{stats, benchmark, info, options};
  MemoryPlan plan;
  for (const MemoryTermStep& step : memory_terms()) step.term(inputs, plan);
  return plan;
}

std::vector<std::pair<std::string, std::string>> memory_term_list() {
  std::vector<std::pair<std::string, std::string>> list;
  for (const MemoryTermStep& step : memory_terms()) list.emplace_back(step.owner, step.counts);
  return list;
}

}  // namespace gpubench
