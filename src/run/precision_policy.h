// What a precision name means on a device: TF32 switches, autocast, loss scaling.
#pragma once

#include <optional>
#include <string>

#include <torch/torch.h>

#include "spec/benchmark.h"

namespace gpubench {

class PrecisionPolicy {
 public:
  // Why `precision` cannot run on `device` ("precision 'fp16' needs a CUDA device; ..."), or
  // empty when it can.
  static std::string unsupported_reason(Precision precision, DeviceKind device);
  // Whether the device computes in reduced precision on tensor cores, where NHWC activations
  // avoid layout conversions (for models that prefer channels-last).
  static bool favours_channels_last(Precision precision, DeviceKind device);

  PrecisionPolicy(Precision precision, torch::Device device);

  // TF32 on for tf32, off for every other precision (fp32 means true IEEE fp32); cuDNN
  // autotuning on for CUDA devices, or deterministic algorithms without it.
  void apply_global_flags(bool deterministic = false) const;
  // The dtype autocast computes in, or nullopt when the forward pass runs in float32.
  std::optional<torch::ScalarType> autocast_dtype() const;
  bool uses_loss_scaling() const { return precision_ == Precision::kFp16; }
  Precision precision() const { return precision_; }
  torch::Device device() const { return device_; }

 private:
  Precision precision_;
  torch::Device device_;
};

// Enables autocast for the policy's device while alive (a no-op for fp32/tf32), restoring the
// previous state afterwards, as torch.autocast does in Python.
class AutocastScope {
 public:
  explicit AutocastScope(const PrecisionPolicy& policy);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_type_;
  bool previous_enabled_ = false;
};

}  // namespace gpubench
