// Loading result files for report, compare and regress, and selecting among them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/result.h"

namespace gpubench {

struct LoadedResult {
  Result result;
  std::string path;
};

// Each path is a result file or a directory searched recursively for *.json. Throws UsageError
// for a missing path, malformed JSON, a non-result document or an unreadable schema, naming the
// file; and when no result file is found at all.
std::vector<LoadedResult> load_results(const std::vector<std::string>& paths);

// The result to show for one benchmark among several runs of it: the newest with a
// throughput, else the newest failure; nullptr for none.
const Result* newest_result(const std::vector<const Result*>& candidates);

// The system a result ran on, as a report column names it: the GPU name, or "CPU (<model>)".
std::string system_name(const Result& result);
// "NVIDIA A40 x4"
std::string system_label(const Result& result);

// Which benchmark a result measured: the identity settings of spec/benchmark_fields.h (every
// setting that changes the work) and the system. report, compare and regress all match on it.
struct BenchmarkIdentity {
  std::vector<std::pair<std::string, std::string>> settings;  // (key, text), in table order
  std::string system;

  // "resnet50 fp16 x2 batch 64 channels-last bucket 100 MiB on NVIDIA A40"
  std::string text() const;
  // The settings' texts without the keys in `leave_out`, space-separated.
  std::string settings_text(const std::vector<std::string>& leave_out = {}) const;
};
BenchmarkIdentity identity_of(const Result& result);
// identity_of(result).text(): two results with the same identity measure the same thing;
// warm-up, steps, trials, seed and timeout do not change it.
std::string benchmark_identity(const Result& result);

// key=value pairs separated by commas; a value may be double-quoted (and then hold commas).
// Keys: gpu (the system name), gpus, model, precision, device, batch_size, hostname.
class ResultSelector {
 public:
  static ResultSelector parse(const std::string& text);  // throws UsageError
  bool matches(const Result& result) const;
  bool constrains(const std::string& key) const { return fields_.count(key) > 0; }
  const std::string& text() const { return text_; }

 private:
  std::map<std::string, std::string> fields_;
  std::string text_;
};

// True when the text looks like a selector rather than a path.
bool looks_like_selector(const std::string& text);

}  // namespace gpubench
