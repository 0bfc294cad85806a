#include "run/precision_policy.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>

#include <cstdlib>

#include "torch_support/compat.h"

namespace gpubench {

std::string PrecisionPolicy::unsupported_reason(Precision precision, DeviceKind device) {
  // TF32 is a CUDA math mode, and CPU autocast has no float16.
  if (device == DeviceKind::kCpu &&
      (precision == Precision::kTf32 || precision == Precision::kFp16)) {
    return "precision '" + to_string(precision) +
           "' needs a CUDA device; on the CPU use fp32 or bf16";
  }
  return "";
}

bool PrecisionPolicy::favours_channels_last(Precision precision, DeviceKind device) {
  const bool mixed = precision == Precision::kFp16 || precision == Precision::kBf16;
  return mixed && device == DeviceKind::kCuda;
}

PrecisionPolicy::PrecisionPolicy(Precision precision, torch::Device device)
    : precision_(precision), device_(device) {}

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
      return torch::kBFloat16;
    default:
      return std::nullopt;
  }
}

AutocastScope::AutocastScope(const PrecisionPolicy& policy) : device_type_(policy.device().type()) {
  const auto dtype = policy.autocast_dtype();
  if (!dtype) return;
  active_ = true;
  previous_enabled_ = compat::autocast_enabled(device_type_);
  compat::set_autocast_dtype(device_type_, *dtype);
  compat::set_autocast_enabled(device_type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast_enabled(device_type_, previous_enabled_);
}

}  // namespace gpubench
