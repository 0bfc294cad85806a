// The memory plan (features/memory_plan.h) as a list of terms: the model's own, then each feature's
// from its folder, in the order their inputs need (the weights' formats before the split over
// ranks), as resolve's rules are one list.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "features/memory_plan.h"

namespace gpubench {

// The bytes a run of `benchmark` needs before its first activation: every term in turn.
MemoryPlan plan_memory(const ModelStats& stats, const ResolvedBenchmark& benchmark,
                       const ModelInfo& info, const ModelOptions& options);

// The terms in the order plan_memory adds them, each as (whose, what it counts): the generated
// reference's table.
std::vector<std::pair<std::string, std::string>> memory_term_list();

}  // namespace gpubench
