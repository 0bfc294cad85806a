#include "train/resolve_benchmark.h"

#include <algorithm>

#include "common/errors.h"
#include "models/model_registry.h"
#include "spec/benchmark_fields.h"
#include "train/graphed_step.h"
#include "train/precision_policy.h"

namespace gpubench {
namespace {

// CPU ranks and threads past this many per logical CPU only queue for the cores (and a typo's
// million ranks would fork until the kernel refuses).
constexpr int kMaxPerLogicalCpu = 4;

int most_per_machine(const MachineFacts& machine) {
  return kMaxPerLogicalCpu * std::max(1, machine.cpu_cores);
}

std::string logical_cpus(const MachineFacts& machine) {
  return "this machine has " + std::to_string(std::max(1, machine.cpu_cores)) + " logical CPU(s)";
}

void check_machine_bounds(const ResolvedBenchmark& b, const MachineFacts& machine) {
  if (b.threads > most_per_machine(machine)) {
    throw UsageError("threads " + std::to_string(b.threads) + ": " + logical_cpus(machine) +
                     "; at most " + std::to_string(most_per_machine(machine)) +
                     " threads per rank");
  }
}

}  // namespace

DeviceKind resolve_device(DeviceKind requested, int ranks, const MachineFacts& machine) {
  const DeviceKind device = requested != DeviceKind::kAuto
                                ? requested
                                : (machine.cuda_available ? DeviceKind::kCuda : DeviceKind::kCpu);
  if (device == DeviceKind::kCuda && !machine.cuda_available) {
    throw UsageError("device 'cuda' requested but no CUDA device is available; use --device cpu");
  }
  // CPU ranks that gpubench starts here; ranks a launcher started are the launcher's business.
  if (device == DeviceKind::kCpu && machine.local_ranks == 0 && ranks > most_per_machine(machine)) {
    throw UsageError("gpus " + std::to_string(ranks) + " CPU ranks: " + logical_cpus(machine) +
                     "; at most " + std::to_string(most_per_machine(machine)) + " CPU ranks (" +
                     std::to_string(kMaxPerLogicalCpu) + " per logical CPU)");
  }
  const int ranks_here = machine.local_ranks > 0 ? machine.local_ranks : ranks;
  const bool one_device_per_task = machine.local_ranks > 0 && machine.cuda_device_count == 1;
  if (device == DeviceKind::kCuda && ranks_here > machine.cuda_device_count &&
      !one_device_per_task) {
    throw UsageError("--gpus " + std::to_string(ranks_here) + " on this machine but only " +
                     std::to_string(machine.cuda_device_count) + " CUDA device(s) present");
  }
  return device;
}

ResolvedBenchmark resolve(const BenchmarkRequest& request, const MachineFacts& machine) {
  ResolvedBenchmark out = with_fixed_defaults(request);
  const ModelInfo& info = ModelRegistry::instance().get(out.model);
  out.model = info.name;
  out.device = resolve_device(out.device, out.gpus, machine);
  if (const std::string why = PrecisionPolicy::unsupported_reason(out.precision, out.device);
      !why.empty()) {
    throw UsageError(why);
  }
  out.batch_size = request.batch_size.value_or(info.default_batch_size);
  out.channels_last = request.channels_last.value_or(
      info.prefers_channels_last &&
      PrecisionPolicy::favours_channels_last(out.precision, out.device));
  if (!info.sequence_model && (request.tgt_len || request.mem_len)) {
    throw UsageError("tgt_len and mem_len apply to language models only, not to '" + info.name +
                     "'");
  }
  if (info.sequence_model) {
    out.tgt_len = request.tgt_len.value_or(info.default_tgt_len);
    out.mem_len = request.mem_len.value_or(info.default_mem_len);
  }
  if (info.minimum_warmup_steps) {
    const int needed = info.minimum_warmup_steps(out.tgt_len, out.mem_len);
    if (out.warmup_steps < needed) {
      throw UsageError("warmup_steps " + std::to_string(out.warmup_steps) + " are too few for " +
                       info.name + ": it needs at least " + std::to_string(needed));
    }
  }
  // CPU ranks on one machine share its cores.
  const int ranks_here = machine.local_ranks > 0 ? machine.local_ranks : out.gpus;
  const int cores = std::max(1, machine.cpu_cores);
  out.threads = request.threads.value_or(
      out.device == DeviceKind::kCpu ? std::max(1, cores / ranks_here) : cores);
  check_machine_bounds(out, machine);
  if (const std::string why = GraphedStep::unsupported_reason(out); !why.empty()) {
    throw UsageError(why);
  }
  return out;
}

void check_runnable_here(const ResolvedBenchmark& benchmark, const MachineFacts& machine) {
  ModelRegistry::instance().get(benchmark.model);
  resolve_device(benchmark.device, benchmark.gpus, machine);
  check_machine_bounds(benchmark, machine);
  if (const std::string why = GraphedStep::unsupported_reason(benchmark); !why.empty()) {
    throw UsageError(why);
  }
}

}  // namespace gpubench
