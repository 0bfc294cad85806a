#include "allreduce_options.h"

#include "commands.h"
#include "common/byte_size.h"
#include "common/errors.h"
#include "common/text_table.h"

namespace gpubench::cli {

CLI::App* add_allreduce_subcommand(CLI::App& app,
                                   const std::shared_ptr<AllreduceOptions>& options) {
  CLI::App* cmd = app.add_subcommand("allreduce", torch_command_description("allreduce"));
  cmd->add_option("--device", options->device, "auto (CUDA when present), cuda or cpu")
      ->capture_default_str();
  const BenchmarkField& gpus = *find_benchmark_field("gpus");
  cmd->add_option("--gpus", options->gpus,
                  "Ranks, one process per device (under torchrun/srun/mpirun: the launcher's)")
      ->check(number_in_range(static_cast<double>(gpus.min), static_cast<double>(gpus.max)))
      ->capture_default_str();
  cmd->add_option("--min-bytes,-b", options->min_bytes, "Smallest message (K, M, G: binary)")
      ->capture_default_str();
  cmd->add_option("--max-bytes,-e", options->max_bytes, "Largest message")->capture_default_str();
  cmd->add_option("--factor,-f", options->sweep.factor, "Size multiplier between rows")
      ->check(number_in_range(2, kMaxSweepFactor))
      ->capture_default_str();
  cmd->add_option("--iters,-n", options->sweep.iters, "Timed all-reduces per size")
      ->check(number_in_range(1, kMaxSweepIterations))
      ->capture_default_str();
  cmd->add_option("--warmup-iters,-w", options->sweep.warmup_iters, "Untimed all-reduces per size")
      ->check(number_in_range(0, kMaxSweepIterations))
      ->capture_default_str();
  // The same bounds as a training benchmark's timeout_s.
  const BenchmarkField& timeout = *find_benchmark_field("timeout");
  cmd->add_option("--timeout", options->timeout_seconds,
                  "Seconds a rank waits for its peers before failing")
      ->check(number_in_range(static_cast<double>(timeout.min), static_cast<double>(timeout.max)))
      ->capture_default_str();
  cmd->add_option("--output,-o", options->output, "Also write the rows as JSON to this file");
  // No -f: nccl-tests' -f is the factor.
  cmd->add_option("--format", options->format,
                  "What standard output shows: table (for the terminal), markdown, csv or json")
      ->check(CLI::IsMember(kTableCommandFormats))
      ->capture_default_str();
  return cmd;
}

AllreduceSweep checked_sweep(const AllreduceOptions& options) {
  AllreduceSweep sweep = options.sweep;
  sweep.min_bytes = parse_byte_size(options.min_bytes, "--min-bytes");
  sweep.max_bytes = parse_byte_size(options.max_bytes, "--max-bytes");
  validate_sweep(sweep);
  require_positive(options.timeout_seconds, "timeout");
  require_positive(options.gpus, "gpus");
  return sweep;
}

}  // namespace gpubench::cli
