// The benchmark fields a suite file may set, named as `gpubench train`'s long options
// (with '_' or '-' alike). One table serves the suite parser and the child command line.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpubench/benchmark_spec.h"

namespace gpubench {

// "batch-size" and "batch_size" both give "batch_size".
std::string normalize_field_key(const std::string& key);
std::vector<std::string> benchmark_field_keys();
bool is_benchmark_field(const std::string& normalized_key);

// Sets one field from a scalar JSON value; throws UsageError naming the field on a bad value.
void set_benchmark_field(BenchmarkSpec& spec, const std::string& normalized_key,
                         const nlohmann::json& value);

// The `gpubench train` flags that reproduce a spec exactly.
std::vector<std::string> to_train_arguments(const BenchmarkSpec& spec);

}  // namespace gpubench
