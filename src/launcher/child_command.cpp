#include "launcher/child_command.h"

#include "settings/benchmark_fields.h"

namespace gpubench {

std::vector<std::string> child_command_line(const ResolvedBenchmark& benchmark,
                                            const std::string& benchmark_file,
                                            const ChildCommand& child) {
  write_benchmark_file(benchmark_file, benchmark);
  std::vector<std::string> argv = {child.executable, "--log-level", child.log_level,
                                   child.subcommand};
  if (child.subcommand == kChildSubcommand) {
    argv.push_back(benchmark_file);
  } else {
    argv.insert(argv.end(), {"--benchmark-file", benchmark_file});
  }
  if (!child.output.empty()) argv.insert(argv.end(), {"--output", child.output});
  return argv;
}

}  // namespace gpubench
