#include "run/run_benchmark.h"

#include "common/errors.h"
#include "datasheets/run_efficiency.h"
#include "run/run_session.h"

namespace gpubench {

Result run_benchmark(const ResolvedBenchmark& benchmark, const RunSetup& run_setup) {
  RunSession session(benchmark, run_setup);
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

Result skipped_result_for(const ResolvedBenchmark& benchmark, const Unavailable& why) {
  Result result = result_for(benchmark);
  result.status = RunStatus::kSkipped;
  result.error = why.what();
  result.requirement = why.requirement();
  return result;
}

}  // namespace gpubench
