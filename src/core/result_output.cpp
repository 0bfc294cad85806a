#include "gpubench/result_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "gpubench/errors.h"
#include "gpubench/text_table.h"

namespace gpubench {
namespace fs = std::filesystem;

namespace {

bool ends_with_json(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

}  // namespace

void ensure_writable_directory(const std::string& directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error || !fs::is_directory(directory)) {
    throw UsageError("cannot create output directory '" + directory +
                     "': " + (error ? error.message() : "not a directory"));
  }
  const std::string probe =
      (fs::path(directory) / (".gpubench-probe." + std::to_string(::getpid()))).string();
  std::FILE* file = std::fopen(probe.c_str(), "w");
  if (file == nullptr) {
    throw UsageError("cannot write to output directory '" + directory +
                     "': " + std::strerror(errno));
  }
  std::fclose(file);
  std::remove(probe.c_str());
}

std::string prepare_result_path(const std::string& output, const BenchmarkSpec& spec) {
  if (output.empty()) throw UsageError("--output must not be empty");
  if (ends_with_json(output)) {
    const fs::path parent = fs::path(output).parent_path();
    ensure_writable_directory(parent.empty() ? "." : parent.string());
    if (fs::is_directory(output)) throw UsageError("output '" + output + "' is a directory");
    return output;
  }
  ensure_writable_directory(output);
  const std::string stem = spec.model + "_" + to_string(spec.precision) + "_" +
                           to_string(spec.device) + "x" + std::to_string(spec.gpus) + "_bs" +
                           std::to_string(spec.batch_size) + "_" + utc_time_text("%Y%m%dT%H%M%SZ");
  fs::path path = fs::path(output) / (stem + ".json");
  for (int n = 2; fs::exists(path); ++n) {
    path = fs::path(output) / (stem + "-" + std::to_string(n) + ".json");
  }
  return path.string();
}

std::string render_results_table(const std::vector<Result>& results) {
  TextTable table({"model", "precision", "device", "gpus", "batch", "throughput", "unit",
                   "step ms p50 [p5-p95]", "trials", "status"});
  for (const Result& r : results) {
    const auto& m = r.metrics;
    const bool ok = r.status == RunStatus::kOk;
    std::string trials;
    for (double t : m.trials) trials += (trials.empty() ? "" : " ") + format_fixed(t, 1);
    table.add_row({r.spec.model, to_string(r.spec.precision), to_string(r.spec.device),
                   std::to_string(r.spec.gpus), std::to_string(r.spec.batch_size),
                   ok ? format_fixed(m.throughput, 2) : "-", m.throughput_unit,
                   ok ? format_fixed(m.step_time_ms.median, 1) + " [" +
                            format_fixed(m.step_time_ms.p5, 1) + "-" +
                            format_fixed(m.step_time_ms.p95, 1) + "]"
                      : "-",
                   trials, ok ? "ok" : to_string(r.status) + ": " + r.error});
  }
  return table.render();
}

}  // namespace gpubench
