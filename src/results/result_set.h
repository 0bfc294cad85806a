// Loading result files for report, compare and regress, and selecting among them.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

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

// Which benchmark a result measured: the identity settings of settings/benchmark_settings.def
// (every setting that changes the work) and the system. report, compare, regress and trend all
// match on their canonical values (identity_values), never on the text shown.
struct BenchmarkIdentity {
  std::vector<std::pair<std::string, std::string>> settings;  // (key, text), in table order
  nlohmann::json values;                                      // {key: canonical value}
  std::string system;

  // "resnet50 fp16 x2 batch 64 channels-last bucket 100 MiB on NVIDIA A40"
  std::string text() const;
  // The settings' texts without the keys in `leave_out`, space-separated.
  std::string settings_text(const std::vector<std::string>& leave_out = {}) const;
  // The values without the keys in `leave_out`, as canonical JSON text.
  std::string values_text(const std::vector<std::string>& leave_out = {}) const;
  // What two results must share to be the same benchmark: the values, and the system.
  std::string match() const { return values_text() + " on " + system; }
};
BenchmarkIdentity identity_of(const Result& result);

// A benchmark's place in a table: ordered by its text, equal where the values are.
struct IdentityKey {
  std::string text;   // BenchmarkIdentity::text()
  std::string match;  // BenchmarkIdentity::match()
  bool operator<(const IdentityKey& o) const {
    return std::tie(text, match) < std::tie(o.text, o.match);
  }
};
// warm-up, steps, trials, seed and timeout do not change it.
IdentityKey identity_key(const Result& result);

// key=value pairs separated by commas; a value may be double-quoted (and then hold commas).
// Keys: gpu (the system name), hostname, and every identity setting (selector_keys()).
class ResultSelector {
 public:
  static ResultSelector parse(const std::string& text);  // throws UsageError
  bool matches(const Result& result) const;
  bool constrains(const std::string& key) const { return fields_.count(key) > 0; }
  // The value it asks `key` for, as written; empty when it does not constrain the key.
  std::string value_of(const std::string& key) const {
    const auto it = fields_.find(key);
    return it == fields_.end() ? "" : it->second;
  }
  const std::string& text() const { return text_; }

 private:
  std::map<std::string, std::string> fields_;
  std::string text_;
};

// What a selector may name: gpu, hostname, then the identity settings in table order.
std::vector<std::string> selector_keys();
// The results that `selector` (ResultSelector's text; empty: every one) matches.
std::vector<LoadedResult> select_results(std::vector<LoadedResult> results,
                                         const std::string& selector);

// True when the text looks like a selector rather than a path.
bool looks_like_selector(const std::string& text);

}  // namespace gpubench
