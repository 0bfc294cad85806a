// gpubench run: every benchmark of a suite file, each in its own process.
#include <cstdio>

#include "gpubench/log.h"

#include "commands.h"
#include "cuda_devices.h"
#include "gpubench/child_process.h"
#include "gpubench/errors.h"
#include "gpubench/launch_environment.h"
#include "gpubench/result_output.h"
#include "gpubench/suite_file.h"
#include "gpubench/suite_runner.h"

namespace gpubench::cli {

void add_run_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  struct RunOptions {
    std::string suite;
    SuiteRunOptions run;
  };
  auto options = std::make_shared<RunOptions>();
  options->run.output_directory = "results";
  CLI::App* cmd = app.add_subcommand("run", "Run a suite file (YAML or JSON)");
  cmd->add_option("suite", options->suite, "Suite file")->required();
  cmd->add_option("--output,-o", options->run.output_directory, "Directory for the result files")
      ->capture_default_str();
  cmd->add_option("--timeout", options->run.timeout_seconds,
                  "Seconds before a benchmark is killed and recorded as failed (0: none)")
      ->capture_default_str();
  cmd->callback([options, &global, &exit_code] {
    if (const auto launch = detect_launch_environment(process_environment())) {
      throw UsageError("gpubench run starts each benchmark's ranks itself; under " +
                       launch->launcher + " launch `gpubench train` for each benchmark instead");
    }
    std::vector<BenchmarkSpec> specs;
    for (const BenchmarkSpec& spec : load_suite_file(options->suite)) {
      specs.push_back(resolve_spec(spec, cuda_available(), cuda_device_count()));
    }
    SuiteRunOptions run = options->run;
    run.executable = current_executable();
    run.log_level = global.log_level;
    const std::vector<Result> results = run_suite(specs, run);
    std::fputs(render_results_table(results).c_str(), stdout);
    size_t failed = 0;
    for (const Result& r : results) failed += r.status == RunStatus::kOk ? 0 : 1;
    std::printf("%zu benchmark(s), %zu failed; results in %s\n", results.size(), failed,
                run.output_directory.c_str());
    exit_code = failed == 0 ? kExitOk : kExitBenchmarkFailed;
  });
}

}  // namespace gpubench::cli
