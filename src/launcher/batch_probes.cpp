#include "launcher/batch_probes.h"

#include <algorithm>
#include <csignal>

#include "common/input_limits.h"
#include "common/log.h"
#include "launcher/child_command.h"
#include "launcher/child_process.h"
#include "launcher/temporary_folder.h"
#include "memory/batch_search.h"
#include "memory/run_memory.h"
#include "memory/tensor_memory.h"
#include "modeling/model_registry.h"
#include "results/result.h"
#include "run/resolve_benchmark.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;
};

MemoryLimit limit_for(const ResolvedBenchmark& b) {
  if (b.memory_limit > 0) return {b.memory_limit, "--memory-limit"};
  if (b.device == DeviceKind::kCuda) {
    return {tensor_memory::device_total_bytes(torch::Device(torch::kCUDA, 0)),
            "the GPU's total memory"};
  }
  return {host_available_memory().value_or(0), "the host's available memory (MemAvailable)"};
}

// fit's largest batch for the limit, from a child `gpubench fit` at the model's least training
// batch (SSD300's and Inception V3's is 2, and fit refuses 1 for them); that least batch when
// fit gives none.
int64_t predicted_batch(const ResolvedBenchmark& b, const MemoryLimit& limit,
                        const BatchProbeOptions& options, const TemporaryFolder& folder) {
  const int64_t least = ModelRegistry::instance().get(b.model).min_training_batch;
  ResolvedBenchmark at_one = b;
  at_one.batch_size = least;
  at_one.profile.clear();  // the measured run's, not fit's
  const std::string output = folder.file("fit.json");
  // An explicit limit caps the allocator's bytes themselves; a GPU's total memory also holds the
  // CUDA context and library workspaces, which fit's default reserve stands for.
  const std::string reserve = b.memory_limit > 0 || b.device != DeviceKind::kCuda ? "1" : "1G";
  std::vector<std::string> command =
      child_command_line(at_one, folder.file("fit-benchmark.json"),
                         {options.executable, options.log_level, output, "fit"});
  command.insert(command.end(), {"--memory", std::to_string(limit.bytes), "--reserve", reserve,
                                 "--format", "json"});
  const ProcessOutcome outcome = run_child_process(command, options.timeout_seconds);
  try {
    if (outcome.succeeded()) {
      return std::max<int64_t>(least, read_json_input_file(output, "fit's output")
                                          .at("cards")
                                          .at(0)
                                          .at("max_batch")
                                          .get<int64_t>());
    }
  } catch (const std::exception& error) {
    log::warn("fit's prediction unreadable ({}); the search starts at batch {}", error.what(),
              least);
    return least;
  }
  log::warn("fit {}; the search starts at batch {}", outcome.describe(), least);
  return least;
}

BatchProbe run_probe(const ResolvedBenchmark& b, int64_t batch, const MemoryLimit& limit,
                     const BatchProbeOptions& options, const TemporaryFolder& folder) {
  ResolvedBenchmark probe = b;
  probe.batch_size = batch;
  probe.gpus = 1;
  probe.warmup_steps = fewest_warmup_steps(b);
  probe.steps = 1;
  probe.repeat = 1;
  probe.telemetry_interval_ms = 0;
  probe.memory_limit =
      probe_memory_limit(limit.bytes, b.device != DeviceKind::kCuda, host_available_memory());
  // A probe only asks whether the batch trains: the trace and the timeline are the measured
  // run's (a probe's trace would take the path the user asked for).
  probe.profile.clear();
  probe.timeline = false;
  const std::string name = "probe-" + std::to_string(batch);
  const std::string output = folder.file(name + ".json");
  const ProcessOutcome outcome =
      run_child_process(child_command_line(probe, folder.file(name + "-benchmark.json"),
                                           {options.executable, options.log_level, output}),
                        options.timeout_seconds, /*discard_stdout=*/true);
  BatchProbe result;
  result.batch = batch;
  if (const std::optional<Result> written = read_result_if_present(output)) {
    result.outcome = written->status == RunStatus::kOk    ? "ok"
                     : written->status == RunStatus::kOom ? "oom"
                                                          : "failed";
    result.peak_bytes = written->metrics.memory.peak_bytes;
    result.error = written->error;
    result.oom_cause = written->oom_cause;
  } else {
    // SIGKILL without a result: the kernel's OOM killer, the one way a probe is killed so.
    const bool killed = !outcome.timed_out && outcome.signal == SIGKILL;
    result.outcome = killed ? "oom" : "failed";
    if (killed) result.oom_cause = "killed by SIGKILL (the kernel's OOM killer)";
    result.error = "probe process " + outcome.describe() + " without writing a result";
  }
  log::info("batch {}: {}", batch, result.outcome);
  return result;
}

}  // namespace

BatchSearchInfo find_largest_batch(const ResolvedBenchmark& benchmark,
                                   const BatchProbeOptions& options) {
  const TemporaryFolder folder("gpubench-batch-search");
  const MemoryLimit limit = limit_for(benchmark);
  const int64_t start = predicted_batch(benchmark, limit, options, folder);
  log::info("searching the largest batch under {} ({}), from fit's {}", bytes_text(limit.bytes),
            limit.source, start);
  BatchSearchInfo search = search_largest_batch(
      start, [&](int64_t batch) { return run_probe(benchmark, batch, limit, options, folder); },
      int64_t{1} << 20, ModelRegistry::instance().get(benchmark.model).min_training_batch);
  search.memory_limit_bytes = limit.bytes;
  search.memory_limit_source = limit.source;
  search.memory_limit_caps = tensor_memory::limit_caps(
      benchmark.device == DeviceKind::kCuda ? torch::Device(torch::kCUDA, 0) : torch::kCPU);
  return search;
}

}  // namespace gpubench
