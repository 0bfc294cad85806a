// Where result files go.
#pragma once

#include <string>

#include "results/result.h"

namespace gpubench {

// `output` is a file (ending in .json) or a directory (created if missing). A directory gets a
// new file named after the benchmark and the time. Throws UsageError when it cannot be written.
std::string prepare_result_path(const std::string& output, const ResolvedBenchmark& benchmark);
// Whether prepare_result_path takes `output` for one file (it ends in .json).
bool names_result_file(const std::string& output);

// Creates `directory` if needed and checks a file can be created in it.
void ensure_writable_directory(const std::string& directory);

}  // namespace gpubench
