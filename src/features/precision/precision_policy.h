// What a precision name means on a device: TF32 switches, autocast, loss scaling, FP8's linear
// layers (docs/fp8.md).
#pragma once

#include <optional>
#include <string>

#include <torch/torch.h>

#include "common/errors.h"
#include "features/precision/fp8_linear.h"
#include "settings/setting_values.h"
#include "system/machine.h"

namespace gpubench {

// Ada (8.9) and Hopper (9.0) were the first with FP8 tensor cores.
inline constexpr int kFp8ComputeCapability = 89;

class PrecisionPolicy {
 public:
  // Why `precision` cannot run on `device` of `machine` ("precision 'fp16' needs a CUDA device;
  // ...") and what the machine lacks, or no refusal when it can.
  static Refusal unsupported_reason(Precision precision, DeviceKind device,
                                    const MachineFacts& machine);
  // Whether the device computes in reduced precision on tensor cores, where NHWC activations
  // avoid layout conversions (for models that prefer channels-last).
  static bool favours_channels_last(Precision precision, DeviceKind device);

  // `fp8_recipe` counts where the precision is fp8.
  PrecisionPolicy(Precision precision, torch::Device device,
                  fp8::Recipe fp8_recipe = fp8::Recipe::kTensorwise);

  // TF32 on for tf32, off for every other precision (fp32 means true IEEE fp32); cuDNN
  // autotuning on for CUDA devices, or deterministic algorithms without it.
  void apply_global_flags(bool deterministic = false) const;
  // The dtype autocast computes in, or nullopt when the forward pass runs in float32. bf16 for
  // fp8: what the linear layers' FP8 products leave to it.
  std::optional<torch::ScalarType> autocast_dtype() const;
  // The recipe the linear layers' products run in FP8 with; nullopt unless the precision is fp8.
  std::optional<fp8::Recipe> fp8_recipe() const;
  bool uses_loss_scaling() const { return precision_ == Precision::kFp16; }
  Precision precision() const { return precision_; }
  torch::Device device() const { return device_; }

 private:
  Precision precision_;
  torch::Device device_;
  fp8::Recipe fp8_recipe_;
};

// precision fp8: a run none of whose products ran in FP8 (linear layers that are not gpubench's,
// or no side a multiple of 16: an odd token count) measured bf16, and fails naming why, rather
// than be reported as fp8. `share`: fp8_matmul_flop_share.
void require_fp8_products(const std::string& model, double share);

// Enables autocast for the policy's device while alive (a no-op for fp32/tf32), restoring the
// previous state afterwards, as torch.autocast does in Python; and for fp8 the linear layers'
// FP8 products (fp8::TrainingScope).
class MixedPrecisionScope {
 public:
  explicit MixedPrecisionScope(const PrecisionPolicy& policy);
  ~MixedPrecisionScope();
  MixedPrecisionScope(const MixedPrecisionScope&) = delete;
  MixedPrecisionScope& operator=(const MixedPrecisionScope&) = delete;

 private:
  fp8::TrainingScope fp8_;
  bool active_ = false;
  c10::DeviceType device_type_;
  bool previous_enabled_ = false;
};

}  // namespace gpubench
