// Runs a list of benchmarks, each in a child process of its own (process/child_command.h), so that
// a crash, an out-of-memory or a hang in one is recorded as a failed result and the rest still run.
#pragma once

#include <string>
#include <vector>

#include "results/result.h"
#include "spec/suite_file.h"

namespace gpubench {

struct SuiteRunOptions {
  std::string output_directory;
  std::string executable;         // the gpubench binary the children run; empty: this one
  double timeout_seconds = 3600;  // per benchmark; <= 0 for none
  std::string log_level = "info";
};

// Every entry resolved on this machine before the first runs: a bad one stops the suite at once,
// its UsageError naming the entry's place in the file.
std::vector<ResolvedBenchmark> resolve_suite_entries(const std::vector<SuiteEntry>& entries);

// Each benchmark runs in a child given it as a benchmark file; every one ends with
// a result file in the output directory.
std::vector<Result> run_suite(const std::vector<ResolvedBenchmark>& benchmarks,
                              const SuiteRunOptions& options);

}  // namespace gpubench
