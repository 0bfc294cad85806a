// What train and infer share between parsing and reporting: the launcher's options, rank 0's
// progress on the terminal, and a launcher's rank run and reported.
#pragma once

#include <string>

#include "cli/progress_printer.h"
#include "commands.h"
#include "launcher/launch.h"

namespace gpubench::cli {

// The progress line of `benchmark`, in its throughput unit (progress_unit).
ProgressPrinter progress_for(const ResolvedBenchmark& benchmark);
std::string progress_unit(const ResolvedBenchmark& benchmark);
// The launcher's options for this command line; `progress` (may be null) receives rank 0's.
LaunchOptions runner_options(const GlobalOptions& global, ProgressPrinter* progress);

// What on this host can make timings noisy (system/timing_conditions.h), warned of once a
// process: before the first benchmark it runs.
void warn_of_timing_hazards();

// `benchmark` run from here (launcher/launch.h) and reported: its result file at `output` (a .json
// file or a directory) and its table (unless `with_table` is false: a sweep prints one for all
// its results); a copy of the result in `kept` where given. Returns the exit code.
int run_and_report(const ResolvedBenchmark& benchmark, const std::string& output,
                   const GlobalOptions& global, Result* kept = nullptr, bool with_table = true);

// This process as a launcher's rank: runs, rank 0 of another launcher reports to `output`, and
// the process ends with _Exit (no c10d thread stuck on a dead peer keeps it alive).
[[noreturn]] void run_launched_rank(const BenchmarkLaunch& rank, const std::string& output,
                                    const GlobalOptions& global);

}  // namespace gpubench::cli
