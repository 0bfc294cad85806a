// gpubench run: every benchmark of a suite file, each in its own process.
#include <cstdio>

#include "common/input_limits.h"
#include "common/log.h"
#include "terminal_width.h"

#include "benchmark_command.h"
#include "commands.h"
#include "common/environment.h"
#include "common/errors.h"
#include "common/standard_streams.h"
#include "launcher/launch.h"
#include "launcher/suite_runner.h"
#include "reporters.h"
#include "reporting/results_table.h"
#include "run_options.h"

namespace gpubench::cli {

void add_run_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<RunOptions>();
  add_run_subcommand(app, options)->callback([options, &global, &exit_code] {
    set_results_format(options->format);
    if (const auto launch = launched_by()) {
      throw UsageError("gpubench run starts each benchmark's ranks itself; under " +
                       launch->launcher + " launch `gpubench train` for each benchmark instead");
    }
    const std::vector<SuiteEntry> entries = suite_entries(*options);
    log::info("{}: {} benchmark(s)", options->suite, entries.size());
    const std::vector<SuiteBenchmark> benchmarks =
        resolve_suite_entries(entries, options->skip_unavailable || options->rehearsal);
    SuiteRunOptions run;
    run.output_directory = options->output_directory;
    run.timeout_seconds = options->timeout_seconds;
    run.log_level = global.log_level;
    warn_of_timing_hazards();
    const std::vector<Result> results = run_suite(benchmarks, run);
    write_standard_output(render_results(results));
    for (const Result& r : results) {
      const std::string noise = render_noise_line(r);
      if (!noise.empty() && options->format == "table")
        write_standard_output(r.benchmark.model + " batch " +
                              std::to_string(r.benchmark.batch_size) + ": " + noise);
    }
    size_t failed = 0, skipped = 0;
    for (const Result& r : results) {
      skipped += r.status == RunStatus::kSkipped ? 1 : 0;
      failed += r.status == RunStatus::kOk || r.status == RunStatus::kSkipped ? 0 : 1;
    }
    std::printf("%zu benchmark(s), %zu failed, %zu skipped; results in %s\n", results.size(),
                failed, skipped, shown(run.output_directory).c_str());
    exit_code = failed == 0 ? kExitOk : kExitBenchmarkFailed;
  });
}

}  // namespace gpubench::cli
