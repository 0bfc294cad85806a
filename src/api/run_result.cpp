// The public API's result files (include/gpubench/results.h): the result files' own reading and
// writing, the headline figures taken from what they read.
#include "api/run_result.h"

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "results/result_set.h"

namespace gpubench {

RunResult run_result_of(const Result& result) {
  RunResult run;
  run.model = result.benchmark.model;
  run.task = to_string(result.benchmark.task);
  run.status = to_string(result.status);
  run.error = result.error;
  run.throughput = result.metrics.throughput;
  run.throughput_unit = result.metrics.throughput_unit;
  run.json = json_text(result_to_json(result)) + "\n";  // as its file holds it
  return run;
}

RunResult read_result(const std::string& path) {
  return run_result_of(read_result_file(path));
}

std::vector<RunResult> read_results(const std::vector<std::string>& files_and_folders) {
  std::vector<RunResult> results;
  for (const LoadedResult& loaded : load_results(files_and_folders)) {
    results.push_back(run_result_of(loaded.result));
  }
  return results;
}

void write_result(const std::string& path, const RunResult& result) {
  const nlohmann::json document = nlohmann::json::parse(result.json, nullptr, false);
  if (document.is_discarded()) {
    throw UsageError("cannot write '" + echoed(path) +
                     "': the RunResult's json is not JSON (it holds a result file's text, as "
                     "run_in_this_process and read_result give it)");
  }
  write_json_atomically(path, result_to_json(result_from_json(document)));
}

}  // namespace gpubench
