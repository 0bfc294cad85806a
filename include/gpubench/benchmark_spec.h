// What to measure: one benchmark, from CLI flags or one expanded suite entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpubench {

enum class Precision { kFp32, kTf32, kFp16, kBf16 };
enum class DeviceKind { kAuto, kCuda, kCpu };

std::string to_string(Precision precision);
std::string to_string(DeviceKind device);
Precision parse_precision(const std::string& text);  // throws UsageError
DeviceKind parse_device(const std::string& text);    // throws UsageError
std::vector<std::string> precision_names();
std::vector<std::string> device_names();

struct BenchmarkSpec {
  std::string model = "resnet50";
  Precision precision = Precision::kFp32;
  DeviceKind device = DeviceKind::kAuto;
  int gpus = 1;            // data-parallel ranks in all (devices; CPU ranks with --device cpu)
  int64_t batch_size = 0;  // per device; 0 means the model's default
  int warmup_steps = 10;
  int steps = 50;
  int repeat = 3;
  uint64_t seed = 42;
  std::optional<bool> channels_last;  // unset: on for fp16/bf16 on CUDA, off otherwise
  int threads = 0;                    // CPU intra-op threads; 0 means every logical CPU
  int64_t tgt_len = 0;                // language models: tokens per segment; 0: the model's
  int64_t mem_len = 0;                // language models: memory length; 0: the model's
  int bucket_mb = 25;                 // gradient all-reduce bucket size (DDP's bucket_cap_mb)

  bool operator==(const BenchmarkSpec& other) const;
};

// Checks ranges that do not depend on the machine (positive steps, known model, ...).
void validate_spec(const BenchmarkSpec& spec);  // throws UsageError

// What `requested` means on this machine for `ranks` ranks in all, `local_ranks` of them here
// (0: all of them, started here by gpubench): kAuto becomes CUDA when present. Throws
// UsageError for CUDA without a device, or more ranks here than devices (unless a launcher binds
// one device to each task, which leaves each rank one visible device).
DeviceKind resolve_device(DeviceKind requested, int ranks, bool cuda_available,
                          int cuda_device_count, int local_ranks = 0);

// Fills every default that depends on the model or the machine: device, batch size,
// channels-last, threads. The result has no kAuto and no zeros left. `local_ranks` is how many
// ranks run on this machine (0: all of spec.gpus, started here by gpubench); under a launcher
// that binds one device to each task, a single visible CUDA device is enough.
BenchmarkSpec resolve_spec(const BenchmarkSpec& spec, bool cuda_available, int cuda_device_count,
                           int local_ranks = 0);

}  // namespace gpubench
