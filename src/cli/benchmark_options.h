// The benchmark settings as command-line options, from the field table
// (settings/benchmark_fields.h): what `train` and `fit` both take. LibTorch-free: `gpubench` checks
// train's values with them before it becomes gpubench-train (main.cpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "common/errors.h"
#include "settings/benchmark.h"
#include "settings/benchmark_fields.h"

namespace gpubench::cli {

struct BenchmarkOptions {
  std::map<std::string, std::string> texts;  // field key -> the option's text
  std::map<std::string, CLI::Option*> options;
  std::map<std::string, std::optional<bool>> flags;  // flag field key -> --key / --no-key
  std::string benchmark_file;                        // --benchmark-file
};

// One option per field (--batch-size, -b, ...), flags as --key and --no-key, and
// --benchmark-file. The help lists the ones `use` names (CommandUse),
// grouped by their sections and typed, and hides the rest, which it still takes (resolve refuses
// them where they do not apply, saying why).
void add_benchmark_options(CLI::App& command, const std::shared_ptr<BenchmarkOptions>& options,
                           CommandUse use);
// What the command line asked for; throws UsageError for a bad value.
BenchmarkRequest requested(const BenchmarkOptions& options);
bool any_setting_given(const BenchmarkOptions& options);

// The settings' rules are shared with suite files and name a setting by its key ("gen_len must
// be at least 2"); a command line's user typed an option. The message with each key that opens
// it, or that holds an underscore and stands anywhere as a word, written as its option
// ("--gen-len must be at least 2"); keys of settings that are no option are kept.
std::string with_option_names(const std::string& message);

// Runs `work`; a UsageError (Unavailable keeps its requirement) leaves it naming options. train,
// infer and fit run their whole command in it, in gpubench (main.cpp's check of the values) and
// in gpubench-train.
template <typename Work>
auto naming_options(Work work) -> decltype(work()) {
  try {
    return work();
  } catch (const Unavailable& e) {
    throw Unavailable(e.requirement(), with_option_names(e.what()));
  } catch (const UsageError& e) {
    throw UsageError(with_option_names(e.what()));
  }
}

struct TrainOptions {
  std::shared_ptr<BenchmarkOptions> settings = std::make_shared<BenchmarkOptions>();
  std::string output = "results";
  std::string format = "table";  // set_results_format
};

// --format of train, infer and run: how their results print on standard output
// (cli/reporters.h's set_results_format).
void add_results_format_option(CLI::App& cmd, std::string& format);

// The `train` subcommand with its options, the benchmark settings and --output: one definition
// for gpubench-train's train and for gpubench's check of its values.
CLI::App* add_train_subcommand(CLI::App& app, const std::shared_ptr<TrainOptions>& options);

}  // namespace gpubench::cli
