// A run's result as `train` and `infer` leave it: the file, and the table on the terminal.
#pragma once

#include <string>

#include "results/result.h"

namespace gpubench::cli {

// Writes the result to `path` (atomically; with `new_name`, a name in an output directory, never
// over another run's file: the next free name, which the `result:` line gives) and prints its
// table, efficiency and inference lines. The figures are printed even when the file cannot be
// written (that is then exit code 2, an output error): a measurement is not lost to a full disk.
// kExitBenchmarkFailed for a run that failed.
int report_result(const Result& result, const std::string& path, bool new_name);

}  // namespace gpubench::cli
