// How a parent (the suite runner, gpubench's rank launcher, the batch search) hands a resolved
// benchmark to a child process: as a benchmark file, which the child runs as given through the
// hidden subcommand below and never resolves again (cli/run_benchmark_command.cpp, through
// launcher/launch.h's launch).
#pragma once

#include <string>
#include <vector>

#include "settings/benchmark.h"

namespace gpubench {

// The hidden subcommand of gpubench-train that runs a benchmark file as given.
inline constexpr const char* kChildSubcommand = "run-benchmark";

struct ChildCommand {
  std::string executable;  // gpubench-train
  std::string log_level;
  // The child's result file; empty for a rank of gpubench's launcher (its rank file).
  std::string output;
  // kChildSubcommand, or "fit" for the batch search's prediction (fit --benchmark-file).
  std::string subcommand = kChildSubcommand;
};

// Writes `benchmark` to `benchmark_file` and returns the child's command line.
std::vector<std::string> child_command_line(const ResolvedBenchmark& benchmark,
                                            const std::string& benchmark_file,
                                            const ChildCommand& child);

}  // namespace gpubench
