// Suite files (YAML or JSON, one schema): `defaults:` plus `benchmarks:`, where a list value
// expands to the cross product of its entries, and optionally `rehearsal:` (run --rehearsal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "settings/benchmark.h"

namespace gpubench {

// One benchmark of a suite, as requested; resolving it is the caller's (it needs the models).
struct SuiteEntry {
  BenchmarkRequest request;
  std::string origin;  // "configs/quick.yaml:7": where the entry is, for error messages
};

// How many benchmarks a suite may expand to unless `run --max-benchmarks` says otherwise.
inline constexpr int64_t kDefaultMaxBenchmarks = 1000;
// Seconds before a suite's benchmark is killed and recorded as failed unless `run --timeout`
// says otherwise.
inline constexpr double kDefaultSuiteTimeoutSeconds = 3600;

// Throws UsageError naming the file (and line, where the parser gives one) for a missing,
// oversized or malformed file, an unknown key, a value outside a setting's type and bounds, and
// a suite whose lists multiply to more than `max_benchmarks` (counted before expanding).
// `rehearse`: the entries as the file's `rehearsal:` section rewrites them (`set` over every
// entry, `replace` of the values it maps), for a run on another device at other sizes; a file
// without that section is refused. `overrides`: KEY=VALUE each (run --set), a suite setting over
// every entry after the file's own fields and its rehearsal, its value read as a plain value in
// the file is ([1, 4] a list that expands); a bad one is refused naming it ("--set 'k=v': ...").
std::vector<SuiteEntry> load_suite_file(const std::string& path,
                                        int64_t max_benchmarks = kDefaultMaxBenchmarks,
                                        bool rehearse = false,
                                        const std::vector<std::string>& overrides = {});
// The same from text; `name` is used in error messages, `is_json` picks the parser.
std::vector<SuiteEntry> parse_suite(const std::string& text, const std::string& name, bool is_json,
                                    int64_t max_benchmarks = kDefaultMaxBenchmarks,
                                    bool rehearse = false,
                                    const std::vector<std::string>& overrides = {});

}  // namespace gpubench
