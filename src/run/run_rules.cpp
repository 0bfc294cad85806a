#include "run/run_rules.h"

#include <algorithm>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/errors.h"
#include "common/input_limits.h"

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
    throw Unavailable(requirement::kCuda,
                      "device 'cuda' requested but no CUDA device is available; use --device cpu");
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

namespace run_rules {

void resolve_device(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  out.device = gpubench::resolve_device(out.device, out.gpus, inputs.machine);
}

void resolve_threads(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const MachineFacts& machine = inputs.machine;
  // CPU ranks on one machine share its cores.
  const int ranks_here = machine.local_ranks > 0 ? machine.local_ranks : out.gpus;
  const int cores = std::max(1, machine.cpu_cores);
  out.threads = inputs.request.threads.value_or(
      out.device == DeviceKind::kCpu ? std::max(1, cores / ranks_here) : cores);
  check_machine_bounds(out, machine);
}

void check_profile_path(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  (void)inputs;
  const std::string& path = out.profile;
  if (path.empty()) return;
  check_path_limits(path, "profile", kNewFileSuffixRoom);
  if (is_special_file(path)) return;  // written into, as an output is
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw UsageError("profile '" + echoed(path) + "' is a directory; it names the trace file");
  }
  const std::string folder = folder_of(path);
  if (!std::filesystem::is_directory(folder, error)) {
    throw UsageError("profile '" + echoed(path) + "': its folder '" + echoed(folder) +
                     "' does not exist");
  }
  if (const std::string why = why_not_writable(folder); !why.empty()) {
    throw UsageError("profile '" + echoed(path) + "': cannot write in '" + echoed(folder) +
                     "': " + why);
  }
}

void check_search_memory_limit(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  (void)inputs;
  if (out.batch_size == kSearchBatchSize && out.memory_limit > 0 &&
      out.memory_limit < kSmallestCardBytes) {
    throw UsageError("memory_limit " + std::to_string(out.memory_limit) +
                     " bytes is under 1 MiB, the least a batch search (batch_size max) takes");
  }
}

}  // namespace run_rules
}  // namespace gpubench
