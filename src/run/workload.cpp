#include "run/workload.h"

#include <stdexcept>

#include "run/run_session.h"

namespace gpubench {

Measurement Workload::measure(RunSession&, const TrialPlan& plan, StepTimer& timer,
                              const MeasurementHooks& hooks) {
  return measure_trials(
      plan, timer, [this] { step(); }, hooks);
}

WorkloadRegistry& WorkloadRegistry::instance() {
  static WorkloadRegistry registry;
  return registry;
}

void WorkloadRegistry::add(WorkloadInfo info) {
  workloads_.push_back(std::move(info));
}

const WorkloadInfo& WorkloadRegistry::for_benchmark(const ResolvedBenchmark& benchmark,
                                                    const ModelInfo& info) const {
  const WorkloadInfo* found = nullptr;
  for (const WorkloadInfo& workload : workloads_) {
    if (!workload.runs(benchmark, info)) continue;
    if (found) {
      throw std::logic_error("workloads " + found->name + " and " + workload.name +
                             " both claim this benchmark");
    }
    found = &workload;
  }
  if (!found)
    throw std::logic_error("no workload runs " + to_string(benchmark.task) + " of " + info.name);
  return *found;
}

}  // namespace gpubench
