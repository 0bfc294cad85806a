#include "run/benchmark_runner.h"

#include "datasheets/run_efficiency.h"
#include "run/run_session.h"

namespace gpubench {

Result run_benchmark(const ResolvedBenchmark& benchmark, const RunContext& context) {
  RunSession session(benchmark, context);
  const WorkloadInfo& workload_info =
      WorkloadRegistry::instance().for_benchmark(benchmark, session.info());
  const std::unique_ptr<Workload> workload = workload_info.make();
  return session.run(*workload);
}

Result failed_result_for(const ResolvedBenchmark& resolved, const std::string& error) {
  Result result = result_for(resolved);
  result.status = RunStatus::kFailed;
  result.error = error;
  attach_datasheet(result);
  return result;
}

}  // namespace gpubench
