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

namespace {

// Whether two paths name one file once `.`, `..` and symbolic links are resolved (the file need
// not exist yet).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error_a, error_b;
  const fs::path canonical_a = fs::weakly_canonical(a, error_a);
  const fs::path canonical_b = fs::weakly_canonical(b, error_b);
  return !error_a && !error_b && canonical_a == canonical_b;
}

// A run's other output, the trace, must not be the result: the result would replace it.
void refuse_result_at_trace(const std::string& result, const ResolvedBenchmark& spec) {
  if (!spec.profile.empty() && same_file(result, spec.profile)) {
    throw UsageError("--output '" + echoed(result) + "' and --profile '" + echoed(spec.profile) +
                     "' are the same file; give the trace and the result different paths");
  }
}

}  // namespace

std::string prepare_result_path(const std::string& output, const ResolvedBenchmark& spec) {
  if (output.empty()) throw UsageError("--output must not be empty");
  if (names_result_file(output)) {
    check_path_limits(output, "output");
    ensure_writable_directory(folder_of(output));
    std::error_code error;
    if (fs::is_directory(output, error)) {
      throw UsageError("output '" + echoed(output) + "' is a directory");
    }
    refuse_result_at_trace(output, spec);
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
  check_path_limits(path.string(), "output");
  refuse_result_at_trace(path.string(), spec);
  return path.string();
}

}  // namespace gpubench
