// Each subcommand adds itself to the app; its callback stores the process exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace gpubench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBenchmarkFailed = 1;
inline constexpr int kExitUsage = 2;

struct GlobalOptions {
  std::string log_level = "info";
};

void add_train_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_run_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_allreduce_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
void add_models_command(CLI::App& app, int& exit_code);
void add_env_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_regress_command(CLI::App& app, int& exit_code);

// Writes `text` to `path` atomically, or to standard output when `path` is empty.
void write_output(const std::string& path, const std::string& text);

}  // namespace gpubench::cli
