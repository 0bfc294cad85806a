#include "process/train_child.h"

#include "spec/benchmark_fields.h"

namespace gpubench {

std::vector<std::string> train_child_command(const ResolvedBenchmark& benchmark,
                                             const std::string& benchmark_file,
                                             const TrainChild& child) {
  write_benchmark_file(benchmark_file, benchmark);
  return {child.executable,   "--log-level",  child.log_level, child.command,
          "--benchmark-file", benchmark_file, "--output",      child.output};
}

}  // namespace gpubench
