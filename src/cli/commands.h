// Each subcommand adds itself to the app; its callback stores the process exit code.
// Two executables: `gpubench` (report, compare, regress: no LibTorch) and `gpubench-train`
// (the subcommands that need LibTorch), which `gpubench` replaces itself with (exec) when one of
// those is asked for, so one command line works for all and `gpubench report` never starts
// LibTorch.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gpubench {
struct RegressOptions;  // reporting/regression.h
}  // namespace gpubench

namespace gpubench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBenchmarkFailed = 1;
inline constexpr int kExitUsage = 2;

// Every exit code gpubench gives, with its meaning: docs/reference/exit-codes.md is made from it.
struct ExitCodeMeaning {
  const char* code;
  const char* meaning;
};
inline constexpr ExitCodeMeaning kExitCodes[] = {
    {"0", "success"},
    {"1",
     "a benchmark ran and failed (its result file says why: `failed`, `oom`, a timeout), a suite "
     "had a failed entry, or `regress`/`trend` found a regression, a failed benchmark or one it "
     "cannot judge (a statistic that is not a finite number fails the gate closed)"},
    {"2",
     "bad input, with one line on standard error naming the bad value and what is allowed; or an "
     "output error (a result, report, JUnit file or standard output that cannot be written)"},
    {"128 + N",
     "ended by signal N (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP) once its children are "
     "stopped and its temporary folders removed, as a shell reports a process the signal "
     "killed"}};

struct GlobalOptions {
  std::string log_level = "info";
  // --wide: tables at their natural width on a terminal too (cli/terminal_width.h).
  bool wide = false;
  // --quiet: no progress and no info lines (the log level at warn where it was lower).
  bool quiet = false;
  // The command line after the executable's name, as given: what a subcommand's ranks run again
  // (the way torchrun starts each rank with the same command).
  std::vector<std::string> arguments;
};

// Adds subcommands to an app; their callbacks store the process exit code.
using CommandRegistration = std::function<void(CLI::App&, const GlobalOptions&, int&)>;

// The subcommands gpubench-train runs, with their one-line help.
struct TorchCommand {
  const char* name;
  const char* description;
};
inline constexpr TorchCommand kTorchCommands[] = {
    {"train", "Train a model on synthetic data and measure throughput"},
    {"infer", "Inference throughput and latency on synthetic data; text generation for LLMs"},
    {"run", "Run a suite file (YAML or JSON)"},
    {"allreduce", "All-reduce bandwidth (algbw, busbw) over NCCL (GPUs) or Gloo (CPU ranks)"},
    {"fit",
     "Predict a recipe's peak memory per device (training, or with --task infer a generation); "
     "does it fit each card, at what batch"},
    {"models", "List the models with parameters and FLOPs"},
    {"env", "Print the environment (the result files' system block)"},
    {"help-reference",
     "Print a reference page in Markdown, made from the code: options, models or exit-codes "
     "(docs/reference/)"}};
inline constexpr const char* kTorchExecutable = "gpubench-train";
// The one-line help of a subcommand of kTorchCommands.
std::string torch_command_description(const std::string& name);

void add_train_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_run_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
// The hidden child subcommand (launcher/child_command.h, kChildSubcommand); it ends the process
// itself (end_process), so it stores no exit code.
void add_run_benchmark_command(CLI::App& app, const GlobalOptions& global);
void add_allreduce_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_models_command(CLI::App& app, int& exit_code);
void add_fit_command(CLI::App& app, int& exit_code);
void add_infer_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_env_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_regress_command(CLI::App& app, int& exit_code);
void add_trend_command(CLI::App& app, int& exit_code);
void add_scale_command(CLI::App& app, int& exit_code);
// The subcommands without LibTorch, which both executables answer: report, compare, regress,
// trend, scale, specs.
void add_torch_free_commands(CLI::App& app, int& exit_code);
// regress's --threshold and --alpha, which trend takes too.
void add_gate_options(CLI::App& cmd, RegressOptions& gate);
// --select: only the results a selector matches (report, regress, trend).
void add_select_option(CLI::App& cmd, std::string& selector);
void add_specs_command(CLI::App& app, int& exit_code);
// gpubench-train's help-reference: renders the app that `add_every_command` builds.
void add_help_reference_command(CLI::App& app, const CommandRegistration& add_every_command,
                                int& exit_code);

// A numeric option's check: a finite number (no nan, no inf) from min to max, integral when
// `integer`; the message names the option's value and the allowed range.
CLI::Validator number_in_range(double min, double max, bool integer = true);

// A comma-separated list of integers by the one list rule (split_list: no empty entry, none
// twice) and number_in_range's rule for each entry ("08" and "8" are one value, given twice).
std::vector<int> integer_list(const std::string& text, const std::string& option, int min, int max,
                              const std::string& example);

// An option's check that refuses an empty value ("--memory ''" is not "every card"), saying
// what to give instead.
CLI::Validator not_empty(const std::string& what_to_give);

// Prints "gpubench: error: <message>" on standard error; returns kExitUsage.
int usage_error(const std::string& message);

// The exit code once a command has run: an output error (standard output could not be written)
// is exit code 2, with its line, whatever the command decided.
int with_output_checked(int exit_code);
// Ends the process now with with_output_checked(exit_code), its output flushed and no destructor
// run: a rank's c10d threads, stuck on a dead peer, must not keep it alive.
[[noreturn]] void end_process(int exit_code);

// Writes `text` to `path` atomically, or to standard output when `path` is empty.
void write_output(const std::string& path, const std::string& text);

// The subcommand named on the command line (the first word that is not an option or the value
// of --log-level), or empty.
std::string named_subcommand(int argc, char** argv);

// The app with gpubench's description, --version, --log-level (into `global`) and the
// subcommands `add_commands` registers.
std::unique_ptr<CLI::App> new_app(GlobalOptions& global, const CommandRegistration& add_commands,
                                  int& exit_code);

// Parses and runs the command line with the subcommands `add_commands` registers; maps errors
// to exit codes: 0 success, 1 a benchmark failed, 2 bad input (one line on stderr).
int run_app(int argc, char** argv, const CommandRegistration& add_commands);

}  // namespace gpubench::cli
