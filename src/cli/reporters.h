// The reporters of a run's result, as google/benchmark separates its reporters from its runner:
// the file reporter writes the result file, the terminal reporter prints its tables. The runner
// (launcher/launch.h) knows neither.
#pragma once

#include <string>
#include <vector>

#include "results/result.h"

namespace gpubench::cli {

// Writes the result to `path` atomically; with `new_name` (a name in an output directory) never
// over another run's file: the next free name. Returns the path written; throws UsageError (an
// output error) when it cannot be written.
std::string save_result(const Result& result, const std::string& path, bool new_name);

// How results print on standard output: "table" (the results table and each run's lines, for a
// person) or, as `report` renders them, "markdown", "csv" or "json" (for a script: then the
// "result:" lines go to standard error). Set once by train, infer and run from their --format.
void set_results_format(const std::string& format);

// The results as set_results_format prints them: the results table, or report's rendering.
std::string render_results(const std::vector<Result>& results);

// Prints the result's batch search, its table (unless a sweep prints one table of its results
// after them: `with_table` false) and, for a run that succeeded, its inference, FP8 and
// efficiency lines.
void print_result(const Result& result, bool with_table = true);

// kExitOk for a run that succeeded, kExitBenchmarkFailed for one that failed (oom included).
int exit_code_of(const Result& result);

// Both, as `train` and `infer` leave a run: the figures are printed even when the file cannot be
// written (that is then exit code 2, an output error): a measurement is not lost to a full disk.
// kExitBenchmarkFailed for a run that failed.
int report_result(const Result& result, const std::string& path, bool new_name,
                  bool with_table = true);

}  // namespace gpubench::cli
