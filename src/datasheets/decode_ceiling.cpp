#include "datasheets/decode_ceiling.h"

#include <algorithm>

namespace gpubench {

void attach_decode_ceiling(Result& result) {
  InferenceMetrics& inference = result.metrics.inference;
  inference.ceiling_bandwidth_gbs = 0;
  inference.ceiling_bandwidth_source.clear();
  inference.decode_ceiling_tokens_per_second = 0;
  inference.decode_ceiling_fraction = 0;
  if (inference.bytes_per_decoded_token <= 0) return;
  if (result.benchmark.device == DeviceKind::kCuda) {
    if (!result.datasheet.matched || result.datasheet.memory_bandwidth_gbs <= 0) return;
    inference.ceiling_bandwidth_gbs = result.datasheet.memory_bandwidth_gbs;
    inference.ceiling_bandwidth_source = "datasheet " + result.datasheet.entry;
  } else {
    if (result.system.cpu_memory_bandwidth_gbs <= 0) return;
    inference.ceiling_bandwidth_gbs = result.system.cpu_memory_bandwidth_gbs;
    inference.ceiling_bandwidth_source = "measured (CPU copy)";
  }
  // Each replica decodes at its own ceiling; a tensor-parallel replica's ranks read their slices
  // (bytes_per_decoded_token is a rank's) at once.
  const double replicas = static_cast<double>(std::max(1, result.distributed.world_size)) /
                          std::max(1, result.distributed.tensor_parallel);
  inference.decode_ceiling_tokens_per_second =
      inference.ceiling_bandwidth_gbs * 1e9 /
      static_cast<double>(inference.bytes_per_decoded_token) * replicas;
  inference.decode_ceiling_fraction =
      inference.decode_tokens_per_second / inference.decode_ceiling_tokens_per_second;
}

}  // namespace gpubench
