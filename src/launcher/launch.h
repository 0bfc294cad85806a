// One launcher for every kind of run (docs/development.md, "One launcher"): a resolved benchmark in
// this process, as N ranks of gpubench's own launcher, after a batch search, or as one rank of a
// launcher's run (torchrun, srun, mpirun); `train` and `infer` alike, and the children that
// suites, ranks and batch probes start. It returns results: writing them to a file and printing
// them are the reporters' (cli/), which the launcher never names.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distributed/launch_environment.h"
#include "features/memory_terms.h"  // memory_term_list, for the generated reference
#include "launcher/child_command.h"
#include "launcher/rank_launcher.h"
#include "memory/fit_prediction.h"
#include "memory/inference_fit.h"
#include "modeling/linear_compute.h"
#include "results/result.h"
#include "run/measurement.h"
#include "settings/benchmark.h"

namespace gpubench {

struct LaunchOptions {
  std::string executable;  // the gpubench binary children run; empty: this one
  std::string log_level = "info";
  ProgressCallback progress;  // rank 0's progress; empty for none
};

// The launcher that started this process (torchrun, srun, mpirun, gpubench's own), if any.
// Throws UsageError for an inconsistent environment.
std::optional<LaunchEnvironment> launched_by();

// What the command line asked for, resolved on this machine, warning once when `auto` fell back
// to the CPU (what runs there; fit, which predicts for cards, does not warn). Throws UsageError.
ResolvedBenchmark resolve_here(const BenchmarkRequest& request, bool warn_on_cpu_fallback = true);
// resolve's rules in the order it runs them, each as (who owns it, what it decides): the
// generated reference's table.
std::vector<std::pair<std::string, std::string>> resolve_rule_list();
std::vector<ResolvedBenchmark> resolve_here(const std::vector<BenchmarkRequest>& requests,
                                            bool warn_on_cpu_fallback = true);

// A benchmark file given on the command line (train, infer or fit --benchmark-file), checked
// through every rule of resolve on this machine, as the command line and suites go: a file that
// resolves to anything else is refused. Throws UsageError.
ResolvedBenchmark checked_benchmark_file(const std::string& path);

// A resolved benchmark and where this process runs it from: alone (in this process, or as the
// benchmark's ranks of gpubench's own launcher, its batch found first by a search where asked),
// or as one rank of a launcher's run (torchrun, srun, mpirun, or gpubench's own, whose ranks are
// its children).
struct BenchmarkLaunch {
  ResolvedBenchmark benchmark;
  std::optional<LaunchEnvironment> rank;  // this process as that launcher's rank

  // Under gpubench's own launcher every rank writes its result to its rank file, which the
  // launcher reads; under another launcher rank 0's result is the run's, for the caller to
  // report, and the other ranks report nothing.
  bool under_gpubench() const { return rank && !rank->rank_results_folder.empty(); }
  bool reports() const { return !rank || (rank->rank == 0 && !under_gpubench()); }
};

// `request` as the launcher's rank: its world size, the machine's devices as the launcher bound
// them; refuses the batch search and graph mode (there is a process group). Throws UsageError.
BenchmarkLaunch launch_as_rank(BenchmarkRequest request, const LaunchEnvironment& rank);

// The one entry point that runs a benchmark and returns its result, for every kind of run:
// alone, the benchmark in this process (run/run_benchmark.h) or as its ranks
// (launcher/rank_run.h), after the batch search (launcher/batch_probes.h) when batch_size is max;
// as a launcher's rank, it joins the other ranks and runs, and under gpubench's launcher writes
// its rank file. The result is the caller's to report where launch.reports(). Never throws for a
// run-time failure (the result says failed or oom); throws Interrupted on SIGINT/SIGTERM and
// UsageError for a benchmark that cannot start. A rank's process should end with _Exit
// afterwards, so that no c10d thread stuck on a dead peer keeps it alive.
Result launch(const BenchmarkLaunch& launch, const LaunchOptions& options);

// fit: `benchmark`'s peak memory per device as a function of batch (and length), from short
// probes of its training step here (train/fit_probe.h); `by_blocks` probes 1 and 2 of its
// blocks even where the whole model could be built.
MemoryFit predict_memory(const ResolvedBenchmark& benchmark, bool by_blocks);
// fit --task infer: a generation's peak as a function of batch and context, from probes of its
// prompt's pass and a decode step here (infer/inference_fit_probe.h).
// `counted_weights`: the linear layers' weights counted in that format (FitOptions).
InferenceMemoryFit predict_inference_memory(
    const ResolvedBenchmark& benchmark, bool by_blocks,
    const std::shared_ptr<const layers::WeightFormat>& counted_weights = nullptr);

// allreduce: `arguments` (this executable's command line) run again as `ranks` ranks of
// gpubench's own launcher; the first rank that failed, or nothing.
std::optional<RankFailure> rerun_as_local_ranks(const std::vector<std::string>& arguments,
                                                int ranks, std::chrono::seconds timeout);

// The label of an optimiser by its registered name ("adamw" -> "AdamW"), for listings.
std::string optimizer_label(const std::string& name);

// GPUBENCH_TEST_HOOKS=1 turns on the test models and fault injection (testing/test_hooks.h).
void enable_test_hooks_from_environment();

}  // namespace gpubench
