// Runs a list of benchmarks, each in its own `gpubench train` process, so that a crash, an
// out-of-memory or a hang in one is recorded as a failed result and the rest still run.
#pragma once

#include <string>
#include <vector>

#include "results/result.h"

namespace gpubench {

struct SuiteRunOptions {
  std::string output_directory;
  std::string executable;         // the gpubench binary to run `train` with
  double timeout_seconds = 3600;  // per benchmark; <= 0 for none
  std::string log_level = "info";
};

// Each benchmark runs in a child `gpubench train` given it as a benchmark file; every one ends with
// a result file in the output directory.
std::vector<Result> run_suite(const std::vector<ResolvedBenchmark>& benchmarks,
                              const SuiteRunOptions& options);

}  // namespace gpubench
