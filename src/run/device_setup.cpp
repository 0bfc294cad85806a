#include "run/device_setup.h"

#include "memory/tensor_memory.h"

namespace gpubench {
namespace {

torch::Device device_of(const ResolvedBenchmark& benchmark, int device_index) {
  return benchmark.device == DeviceKind::kCuda
             ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_index))
             : torch::Device(torch::kCPU);
}

}  // namespace

DeviceSetup::DeviceSetup(const ResolvedBenchmark& benchmark, int device_index)
    : benchmark_(benchmark),
      info_(ModelRegistry::instance().get(benchmark.model)),
      device_(device_of(benchmark, device_index)),
      policy_(benchmark.precision, device_,
              benchmark.precision == Precision::kFp8 ? fp8::parse_recipe(benchmark.fp8_recipe)
                                                     : fp8::Recipe::kTensorwise) {
  policy_.apply_global_flags(benchmark.deterministic);  // first: the system block records them
  tensor_memory::track_cpu_tensors();
  if (device_.is_cpu()) tensor_memory::keep_freed_host_memory();
  at::set_num_threads(benchmark.threads);
  torch::manual_seed(static_cast<uint64_t>(benchmark.seed));
}

}  // namespace gpubench
