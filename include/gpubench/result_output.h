// Where result files go and how results are shown on the terminal.
#pragma once

#include <string>
#include <vector>

#include "gpubench/result.h"

namespace gpubench {

// `output` is a file (ending in .json) or a directory (created if missing). A directory gets a
// new file named after the benchmark and the time. Throws UsageError when it cannot be written.
std::string prepare_result_path(const std::string& output, const BenchmarkSpec& spec);

// Creates `directory` if needed and checks a file can be created in it.
void ensure_writable_directory(const std::string& directory);

// One row per result: model, precision, device, batch, throughput, step times, trials, status.
std::string render_results_table(const std::vector<Result>& results);

}  // namespace gpubench
