// Result files from code (docs/api.md, schemas/result.schema.json): a run's headline figures and
// its whole result as its file holds it; read one file or a folder of them, write one whole or
// not at all.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

struct RunResult {
  std::string model;            // the model's name
  std::string task;             // "train" or "infer"
  std::string status;           // "ok", "oom", "failed", "skipped", ... (docs/results.md)
  std::string error;            // why, where it did not run or failed
  double throughput = 0;        // of the median trial, in throughput_unit; 0 without one
  std::string throughput_unit;  // "images/sec", "tokens/sec", ...
  // The whole result as its file holds it (JSON, schemas/result.schema.json): the environment,
  // every trial, memory, telemetry.
  std::string json;

  bool ok() const { return status == "ok"; }
};

// Reads one result file; throws UsageError naming the file for one that is missing, malformed or
// not a result.
RunResult read_result(const std::string& path);
// Every result in the files and folders given (searched for *.json), as `gpubench report` reads
// them; throws UsageError as read_result does, and where no result is found.
std::vector<RunResult> read_results(const std::vector<std::string>& files_and_folders);
// Writes `result` to `path`, replacing it atomically: a reader never sees half a file. Throws
// UsageError where its JSON is not a result.
void write_result(const std::string& path, const RunResult& result);

}  // namespace gpubench
