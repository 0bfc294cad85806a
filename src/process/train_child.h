// How a parent (the suite runner, gpubench's rank launcher) hands a resolved benchmark to a child
// `gpubench train`: as a benchmark file, which the child reads and never resolves again.
#pragma once

#include <string>
#include <vector>

#include "spec/benchmark.h"

namespace gpubench {

struct TrainChild {
  std::string executable;  // gpubench-train
  std::string log_level;
  std::string output;  // the child's --output
  std::string command = "train";  // or "fit": the subcommands that take a benchmark file
};

// Writes `benchmark` to `benchmark_file` and returns the child's command line.
std::vector<std::string> train_child_command(const ResolvedBenchmark& benchmark,
                                             const std::string& benchmark_file,
                                             const TrainChild& child);

}  // namespace gpubench
