#include "results/result_path.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {
namespace fs = std::filesystem;

bool names_result_file(const std::string& output) {
  return output.size() > 5 && output.compare(output.size() - 5, 5, ".json") == 0;
}

void ensure_writable_directory(const std::string& directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error || !fs::is_directory(directory)) {
    throw UsageError("cannot create output directory '" + echoed(directory) +
                     "': " + (error ? error.message() : "not a directory"));
  }
  const std::string why = why_not_writable(directory);
  if (!why.empty()) {
    throw UsageError("cannot write to output directory '" + echoed(directory) + "': " + why);
  }
}

std::string prepare_result_path(const std::string& output, const ResolvedBenchmark& spec) {
  if (output.empty()) throw UsageError("--output must not be empty");
  if (names_result_file(output)) {
    ensure_writable_directory(folder_of(output));
    std::error_code error;
    if (fs::is_directory(output, error)) {
      throw UsageError("output '" + echoed(output) + "' is a directory");
    }
    return output;
  }
  ensure_writable_directory(output);
  const std::string stem =
      spec.model + (spec.task == Task::kInfer ? "_infer" : "") + "_" + to_string(spec.precision) +
      "_" + to_string(spec.device) + "x" + std::to_string(spec.gpus) + "_bs" +
      (spec.batch_size == kSearchBatchSize ? std::string("max") : std::to_string(spec.batch_size)) +
      "_" + utc_time_text("%Y%m%dT%H%M%SZ");
  fs::path path = fs::path(output) / (stem + ".json");
  std::error_code error;
  for (int n = 2; fs::exists(path, error); ++n) {
    path = fs::path(output) / (stem + "-" + std::to_string(n) + ".json");
  }
  return path.string();
}

}  // namespace gpubench
