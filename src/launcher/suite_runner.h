// Runs a list of benchmarks, each in a child process of its own (launcher/child_command.h), or as
// its ranks, each a child, so that a crash, an out-of-memory or a hang in one is recorded as a
// failed result and the rest still run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "results/result.h"
#include "settings/suite_file.h"

namespace gpubench {

struct SuiteRunOptions {
  std::string output_directory;
  std::string executable;  // the gpubench binary the children run; empty: this one
  double timeout_seconds = kDefaultSuiteTimeoutSeconds;  // per benchmark; <= 0 for none
  std::string log_level = "info";
};

// A suite's entry resolved on this machine, or what the machine or build lacks to run it.
struct SuiteBenchmark {
  ResolvedBenchmark benchmark;  // an unavailable entry: as_requested (run/resolve_benchmark.h)
  std::optional<Unavailable> unavailable;
};

// Every entry resolved on this machine before the first runs: a bad one stops the suite at once,
// its UsageError naming the entry's place in the file. With `skip_unavailable`, an entry that is
// well formed but needs what this machine or build lacks (common/errors.h's Unavailable) is kept,
// to be recorded as skipped.
std::vector<SuiteBenchmark> resolve_suite_entries(const std::vector<SuiteEntry>& entries,
                                                  bool skip_unavailable = false);

// Each benchmark runs in a child given it as a benchmark file (one of several ranks: its ranks,
// ended together at the timeout); every one ends with a result file in the output directory, an
// unavailable one with a skipped result and no child.
std::vector<Result> run_suite(const std::vector<SuiteBenchmark>& benchmarks,
                              const SuiteRunOptions& options);

}  // namespace gpubench
