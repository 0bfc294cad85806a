#include "benchmark_to_run.h"

#include "common/errors.h"
#include "launcher/launch.h"

namespace gpubench::cli {

ResolvedBenchmark benchmark_to_run(const BenchmarkOptions& options, const BenchmarkRequest& request,
                                   bool warn_on_cpu_fallback) {
  if (options.benchmark_file.empty()) return resolve_here(request, warn_on_cpu_fallback);
  if (any_setting_given(options)) {
    throw UsageError("--benchmark-file holds every setting; give no other benchmark options");
  }
  return checked_benchmark_file(options.benchmark_file);
}

}  // namespace gpubench::cli
