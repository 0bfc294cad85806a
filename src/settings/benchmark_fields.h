// Every benchmark setting as a field of one table, made from its one entry in
// settings/benchmark_settings.def: its key (suite key, JSON key, and `train`'s long option with '-'
// for '_'), type, default, bounds, help, whether it is part of the benchmark's identity and
// where its value counts there. The `train` options, the suite keys, the result's "benchmark"
// block (both directions), the identity that report, compare and regress match on, the
// selectors, and the file a child process receives all come from this table.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "settings/benchmark.h"

namespace gpubench {

// kByteSize: an integer count of bytes, given as text with a suffix ("4GB", common/byte_size.h).
enum class FieldType { kText, kInteger, kFlag, kChoice, kByteSize };

// The commands a setting is an option of in their help: train, infer, fit (a prediction). Every
// command still accepts every setting, so that one given where it does not apply meets resolve's
// refusal that says why.
enum CommandUse : unsigned { kUsedByTrain = 1, kUsedByInfer = 2, kUsedByFit = 4, kUsedByAll = 7 };

struct SettingSectionInfo {
  SettingSection section;
  std::string name;  // "fine-tuning"
  std::string help;  // what the section's settings decide
  std::function<bool(const ResolvedBenchmark&)> applies;
  unsigned used_by = kUsedByAll;  // CommandUse: its settings' commands, unless one says others
};

// Every section, in the order the reference lists them.
const std::vector<SettingSectionInfo>& setting_sections();
const SettingSectionInfo& section_info(SettingSection section);

struct BenchmarkField {
  std::string key;         // "batch_size"
  std::string short_flag;  // "-b", or empty
  std::string result_key;  // its key in a result's "benchmark" block
  FieldType type = FieldType::kInteger;
  std::string help;
  // The value when the user gives none; null when the model, the precision policy or the
  // machine decides it (default_text then says which).
  nlohmann::json default_value;
  std::string default_text;
  int64_t min = 0, max = 0;  // kInteger, kByteSize
  // kInteger: words that stand for a value outside min..max (batch_size "max").
  std::vector<std::pair<std::string, int64_t>> named_values;
  std::vector<std::string> choices;  // kChoice
  bool identity = false;             // a different value is a different benchmark
  bool suite = true;                 // a suite entry may set it
  bool command_line = true;          // an option of train and fit (task: the command says it)
  // A recorded benchmark may hold 0 (text: empty) for "none": the batch of a published figure
  // whose source does not give it, the tokens per segment of a model that is not a language
  // model, the LoRA settings of a full fine-tune.
  bool zero_means_none = false;
  SettingSection section = SettingSection::kModel;
  unsigned used_by = 0;  // CommandUse; 0: its section's

  // Whether `command` (one CommandUse) lists it in its help.
  bool shown_by(CommandUse command) const;

  std::function<std::optional<nlohmann::json>(const BenchmarkRequest&)> requested;
  std::function<void(BenchmarkRequest&, const nlohmann::json&)> request;
  std::function<nlohmann::json(const ResolvedBenchmark&)> resolved;
  std::function<void(ResolvedBenchmark&, const nlohmann::json&)> resolve;
  // This setting in a benchmark's identity ("batch 64"), or empty where it says nothing (the
  // bucket size of a single process: where it does not apply).
  std::function<std::string(const ResolvedBenchmark&)> identity_text =
      [](const ResolvedBenchmark&) { return std::string(); };
  // Whether its value is part of this benchmark's identity (identity fields only): its
  // section's condition and its own (the bucket size only with several training ranks, the
  // threads only on the CPU).
  std::function<bool(const ResolvedBenchmark&)> applies = [](const ResolvedBenchmark&) {
    return true;
  };

  std::string long_flag() const;  // "--batch-size"
};

const std::vector<BenchmarkField>& benchmark_fields();
std::vector<std::string> benchmark_field_keys();
// Accepts "batch-size" as "batch_size"; nullptr for an unknown key.
const BenchmarkField* find_benchmark_field(const std::string& key);

// The values a field takes, as its messages and the options reference say them: "one of fp32,
// tf32, fp16, bf16", "an integer from 1 to 1048576, or max".
std::string describe_rule(const BenchmarkField& field);

// Checks a value against the field's type and bounds and returns it in canonical form; throws
// UsageError "batch_size must be an integer from 1 to 1048576, got 0".
nlohmann::json check_field_value(const BenchmarkField& field, const nlohmann::json& value);
// The same from command-line text ("64", "fp16", "true").
nlohmann::json field_value_from_text(const BenchmarkField& field, const std::string& text);

// Sets one requested setting; throws UsageError naming the key for an unknown key or bad value.
void set_requested_field(BenchmarkRequest& request, const std::string& key,
                         const nlohmann::json& value);

// Every setting the table gives a fixed default for, where the request leaves it unset; what
// the model or the machine decides is left to resolve().
ResolvedBenchmark with_fixed_defaults(const BenchmarkRequest& request);

// The result's "benchmark" settings, keyed by result_key; and back, checking every value's
// type and bounds as for a request (0 allowed where zero_means_none). Reading fills a key
// that is absent with the field's default (older result files).
nlohmann::json benchmark_to_json(const ResolvedBenchmark& benchmark);
ResolvedBenchmark benchmark_from_json(const nlohmann::json& block);  // throws UsageError

// What a child process receives: {"schema": "gpubench.benchmark/1", "benchmark": {...}}.
inline constexpr const char* kBenchmarkSchema = "gpubench.benchmark/1";
void write_benchmark_file(const std::string& path, const ResolvedBenchmark& benchmark);
ResolvedBenchmark read_benchmark_file(const std::string& path);  // throws UsageError

// A request that gives every setting of `benchmark` that applies to it (not those at their
// "does not apply" value), so that a benchmark file goes through resolve() and its rules as a
// command line does.
BenchmarkRequest request_from(const ResolvedBenchmark& benchmark);

// The first setting in which `a` and `b` differ, as "key: A, resolved: B"; empty when none.
std::string first_difference(const ResolvedBenchmark& a, const ResolvedBenchmark& b);

// The identity settings in table order, each as (key, text), without the empty ones.
std::vector<std::pair<std::string, std::string>> identity_settings(const ResolvedBenchmark& b);
// The identity as canonical values: {key: value} of every identity setting that applies to `b`
// (BenchmarkField::applies). Two benchmarks are the same benchmark where these are equal.
nlohmann::json identity_values(const ResolvedBenchmark& b);

}  // namespace gpubench
