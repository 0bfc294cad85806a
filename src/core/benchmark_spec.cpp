#include "gpubench/benchmark_spec.h"

#include <algorithm>
#include <thread>

#include "gpubench/enum_names.h"
#include "gpubench/errors.h"
#include "gpubench/model_registry.h"

namespace gpubench {
namespace {

const EnumNames<Precision> kPrecisions = {{Precision::kFp32, "fp32"},
                                          {Precision::kTf32, "tf32"},
                                          {Precision::kFp16, "fp16"},
                                          {Precision::kBf16, "bf16"}};

const EnumNames<DeviceKind> kDevices = {
    {DeviceKind::kAuto, "auto"}, {DeviceKind::kCuda, "cuda"}, {DeviceKind::kCpu, "cpu"}};

}  // namespace

std::string to_string(Precision precision) {
  return name_of(kPrecisions, precision);
}
std::string to_string(DeviceKind device) {
  return name_of(kDevices, device);
}
Precision parse_precision(const std::string& text) {
  return parse_name(kPrecisions, text, "precision");
}
DeviceKind parse_device(const std::string& text) {
  return parse_name(kDevices, text, "device");
}
std::vector<std::string> precision_names() {
  return names_of(kPrecisions);
}
std::vector<std::string> device_names() {
  return names_of(kDevices);
}

bool BenchmarkSpec::operator==(const BenchmarkSpec& o) const {
  return model == o.model && precision == o.precision && device == o.device && gpus == o.gpus &&
         batch_size == o.batch_size && warmup_steps == o.warmup_steps && steps == o.steps &&
         repeat == o.repeat && seed == o.seed && channels_last == o.channels_last &&
         threads == o.threads && tgt_len == o.tgt_len && mem_len == o.mem_len &&
         bucket_mb == o.bucket_mb;
}

void validate_spec(const BenchmarkSpec& spec) {
  ModelRegistry::instance().get(spec.model);
  require_positive(spec.gpus, "gpus");
  if (spec.batch_size < 0) {
    throw UsageError("batch size must be a positive integer, got " +
                     std::to_string(spec.batch_size));
  }
  if (spec.warmup_steps < 0) {
    throw UsageError("warmup steps must be zero or more, got " + std::to_string(spec.warmup_steps));
  }
  require_positive(spec.steps, "steps");
  require_positive(spec.repeat, "repeat");
  require_positive(spec.bucket_mb, "bucket_mb");
  if (spec.tgt_len < 0 || spec.mem_len < 0) {
    throw UsageError("tgt_len and mem_len must be zero (the model's default) or more, got " +
                     std::to_string(spec.tgt_len) + " and " + std::to_string(spec.mem_len));
  }
  if (spec.threads < 0) {
    throw UsageError("threads must be zero (all logical CPUs) or more, got " +
                     std::to_string(spec.threads));
  }
}

DeviceKind resolve_device(DeviceKind requested, int ranks, bool cuda_available,
                          int cuda_device_count, int local_ranks) {
  const DeviceKind device = requested != DeviceKind::kAuto
                                ? requested
                                : (cuda_available ? DeviceKind::kCuda : DeviceKind::kCpu);
  if (device == DeviceKind::kCuda && !cuda_available) {
    throw UsageError("device 'cuda' requested but no CUDA device is available; use --device cpu");
  }
  const int ranks_here = local_ranks > 0 ? local_ranks : ranks;
  const bool one_device_per_task = local_ranks > 0 && cuda_device_count == 1;
  if (device == DeviceKind::kCuda && ranks_here > cuda_device_count && !one_device_per_task) {
    throw UsageError("--gpus " + std::to_string(ranks_here) + " on this machine but only " +
                     std::to_string(cuda_device_count) + " CUDA device(s) present");
  }
  return device;
}

BenchmarkSpec resolve_spec(const BenchmarkSpec& spec, bool cuda_available, int cuda_device_count,
                           int local_ranks) {
  validate_spec(spec);
  BenchmarkSpec out = spec;
  const ModelInfo& info = ModelRegistry::instance().get(spec.model);
  out.model = info.name;
  out.device = resolve_device(out.device, out.gpus, cuda_available, cuda_device_count, local_ranks);
  if (out.device == DeviceKind::kCpu &&
      (out.precision == Precision::kTf32 || out.precision == Precision::kFp16)) {
    throw UsageError("precision '" + to_string(out.precision) +
                     "' needs a CUDA device; on the CPU use fp32 or bf16");
  }
  const int ranks_here = local_ranks > 0 ? local_ranks : out.gpus;
  if (out.batch_size == 0) out.batch_size = info.default_batch_size;
  if (!out.channels_last) {
    const bool mixed = out.precision == Precision::kFp16 || out.precision == Precision::kBf16;
    out.channels_last = mixed && out.device == DeviceKind::kCuda && info.family == "convnet";
  }
  if (!info.sequence_model && (out.tgt_len != 0 || out.mem_len != 0)) {
    throw UsageError("tgt_len and mem_len apply to language models only, not to '" + info.name +
                     "'");
  }
  if (info.sequence_model) {
    if (out.tgt_len == 0) out.tgt_len = info.default_tgt_len;
    if (out.mem_len == 0) out.mem_len = info.default_mem_len;
    const int needed = static_cast<int>(out.mem_len / out.tgt_len) + 2;
    if (out.warmup_steps < needed) {
      throw UsageError("warmup steps " + std::to_string(out.warmup_steps) + " are too few for " +
                       info.name + ": at least mem_len / tgt_len + 2 = " + std::to_string(needed));
    }
  }
  if (out.threads == 0) {
    // CPU ranks on one machine share its cores.
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    out.threads = out.device == DeviceKind::kCpu ? std::max(1, cores / ranks_here) : cores;
  }
  return out;
}

}  // namespace gpubench
