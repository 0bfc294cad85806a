// Suite files (YAML or JSON, one schema): `defaults:` plus `benchmarks:`, where a list value
// expands to the cross product of its entries.
#pragma once

#include <string>
#include <vector>

#include "gpubench/benchmark_spec.h"

namespace gpubench {

// Throws UsageError naming the file (and line, where the parser gives one) for a missing or
// malformed file, an unknown key or a bad value. Every returned spec passed validate_spec.
std::vector<BenchmarkSpec> load_suite_file(const std::string& path);
// The same from text; `name` is used in error messages, `is_json` picks the parser.
std::vector<BenchmarkSpec> parse_suite(const std::string& text, const std::string& name,
                                       bool is_json);

}  // namespace gpubench
