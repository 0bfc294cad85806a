#include "features/precision/precision_policy.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>

#include <cstdlib>
#include <stdexcept>

#include "torch_support/compat.h"

namespace gpubench {

namespace {

// FP8 products: a LibTorch with scaled_mm, and tensor cores that have FP8 (Ada, Hopper and
// later); on the CPU where LibTorch's scaled_mm runs there, for tests only.
Refusal fp8_unsupported_reason(DeviceKind device, const MachineFacts& machine) {
  if (!compat::kHasFp8) {
    return {"precision 'fp8' needs LibTorch " + std::string(compat::kFp8MinimumLibtorch) +
                " or later (at::_scaled_mm with rowwise scales); this gpubench is built with "
                "LibTorch " +
                compat::libtorch_version(),
            requirement::kLibtorchFp8};
  }
  if (device == DeviceKind::kCuda && machine.cuda_compute_capability < kFp8ComputeCapability) {
    return {
        "precision 'fp8' needs FP8 tensor cores (compute capability 8.9 or later: L4, L40S, "
        "RTX 4090, H100, H200); " +
            machine.cuda_device_name + " has compute capability " +
            compute_capability_text(machine.cuda_compute_capability) + "; use bf16",
        requirement::kFp8TensorCores};
  }
  if (device == DeviceKind::kCpu && !compat::scaled_mm_runs_on_cpu()) {
    return {
        "precision 'fp8' on the CPU needs a LibTorch whose _scaled_mm runs there (2.11's "
        "does); LibTorch " +
            compat::libtorch_version() + " has none",
        requirement::kLibtorchCpuFp8};
  }
  return {};
}

}  // namespace

Refusal PrecisionPolicy::unsupported_reason(Precision precision, DeviceKind device,
                                            const MachineFacts& machine) {
  // TF32 is a CUDA math mode, and CPU autocast has no float16.
  if (device == DeviceKind::kCpu &&
      (precision == Precision::kTf32 || precision == Precision::kFp16)) {
    return {
        "precision '" + to_string(precision) + "' needs a CUDA device; on the CPU use fp32 or bf16",
        requirement::kCuda};
  }
  if (precision == Precision::kFp8) return fp8_unsupported_reason(device, machine);
  return {};
}

bool PrecisionPolicy::favours_channels_last(Precision precision, DeviceKind device) {
  const bool mixed = precision == Precision::kFp16 || precision == Precision::kBf16;
  return mixed && device == DeviceKind::kCuda;
}

PrecisionPolicy::PrecisionPolicy(Precision precision, torch::Device device, fp8::Recipe fp8_recipe)
    : precision_(precision), device_(device), fp8_recipe_(fp8_recipe) {}

void PrecisionPolicy::apply_global_flags(bool deterministic) const {
  const bool tf32 = precision_ == Precision::kTf32;
  compat::set_tf32(tf32, tf32);
  // cuDNN picks the fastest convolution algorithm during warm-up, as the reference
  // harnesses do (torch.backends.cudnn.benchmark = True), unless two runs must compute alike.
  at::globalContext().setBenchmarkCuDNN(device_.is_cuda() && !deterministic);
  at::globalContext().setDeterministicCuDNN(deterministic);
  // Operators without a deterministic kernel warn instead of failing the run.
  at::globalContext().setDeterministicAlgorithms(deterministic, /*warn_only=*/true);
  // cuBLAS reads it when its first handle is made: before any CUDA work of the run.
  if (deterministic) ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0);
}

std::optional<torch::ScalarType> PrecisionPolicy::autocast_dtype() const {
  switch (precision_) {
    case Precision::kFp16:
      return torch::kHalf;
    case Precision::kBf16:
    case Precision::kFp8:
      return torch::kBFloat16;
    default:
      return std::nullopt;
  }
}

std::optional<fp8::Recipe> PrecisionPolicy::fp8_recipe() const {
  if (precision_ != Precision::kFp8) return std::nullopt;
  return fp8_recipe_;
}

void require_fp8_products(const std::string& model, double share) {
  if (share > 0) return;
  throw std::runtime_error(
      "precision fp8: none of " + model +
      "'s products ran in FP8, so this run measured bf16: FP8 takes gpubench's linear layers "
      "whose in and out features, and tokens per step when the weight trains, are multiples of "
      "16");
}

MixedPrecisionScope::MixedPrecisionScope(const PrecisionPolicy& policy)
    : fp8_(policy.fp8_recipe()), device_type_(policy.device().type()) {
  const auto dtype = policy.autocast_dtype();
  if (!dtype) return;
  active_ = true;
  previous_enabled_ = compat::autocast_enabled(device_type_);
  compat::set_autocast_dtype(device_type_, *dtype);
  compat::set_autocast_enabled(device_type_, true);
  at::autocast::increment_nesting();
}

MixedPrecisionScope::~MixedPrecisionScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast_enabled(device_type_, previous_enabled_);
}

}  // namespace gpubench
