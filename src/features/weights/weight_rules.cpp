#include "features/weights/weight_rules.h"

#include "common/errors.h"
#include "features/parallelism/tensor_parallel.h"
#include "features/weights/int4_weights.h"
#include "modeling/mxfp4_weights.h"
#include "modeling/weight_formats.h"
#include "torch_support/compat.h"

namespace gpubench::weights {
namespace {

constexpr int kInt4ComputeCapability = 80;  // tinygemm's int4 kernel: Ampere and later

std::string integer_weight_models() {
  return models_where([](const ModelCapabilities& can) { return can.holds_integer_weights(); });
}

// MXFP4's blocks of 32 run along an expert's inputs: under tensor parallelism each rank's slice
// of the expert width must be whole blocks.
void check_mxfp4_slices(const ModelInfo& info, const ResolvedBenchmark& out) {
  const int64_t width = info.capabilities.expert_width;
  const int64_t slice = width / std::max(1, out.tensor_parallel);
  if (slice % mxfp4::kBlock == 0) return;
  throw UsageError("weights mxfp4 with tensor_parallel " + std::to_string(out.tensor_parallel) +
                   ": " + info.name + "'s expert width " + std::to_string(width) + " splits into " +
                   std::to_string(slice) + " per rank, not whole MXFP4 blocks of " +
                   std::to_string(mxfp4::kBlock) +
                   "; use a tensor_parallel that leaves multiples of " +
                   std::to_string(mxfp4::kBlock) + ", expert_parallel, or weights bf16");
}

}  // namespace

void check_int4_shapes(const ModelInfo& info, const ResolvedBenchmark& out) {
  for (const auto& shape : info.capabilities.linear_weight_shapes) {
    // Each rank holds its slice; the sizes divide (tensor_parallelism.cpp's rule).
    const auto [rows, columns] =
        parallelism::weight_slice(shape.out, shape.in, shape.role, out.tensor_parallel);
    const std::string why =
        integer_weights::why_not_int4(rows, columns, out.weight_group, out.device);
    if (!why.empty()) {
      throw UsageError("weights int4 with weight_group " + std::to_string(out.weight_group) + ": " +
                       info.name + "'s [" + std::to_string(rows) + ", " + std::to_string(columns) +
                       "] weight" +
                       (out.tensor_parallel > 1 ? " (a tensor-parallel rank's slice)" : "") +
                       " cannot be held so: " + why);
    }
  }
}

void resolve_format(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const BenchmarkRequest& request = inputs.request;
  const ModelInfo& info = inputs.model;
  std::string weights = out.weights == "auto" ? std::string() : out.weights;
  const bool precision_is_default_format =
      !request.precision || *request.precision == Precision::kBf16;
  if (weights.empty() && out.task == Task::kInfer && precision_is_default_format) {
    weights = info.capabilities.default_weights;
  }
  if (weights == "mxfp4" && info.capabilities.experts == 0) {
    throw UsageError("weights 'mxfp4' holds the experts of a mixture of experts (" +
                     models_where([](const ModelCapabilities& can) { return can.experts > 0; }) +
                     "); " + info.name + " is a dense model");
  }
  const bool quantized = layers::is_integer_format(weights) || weights == "mxfp4";
  if (request.weight_group && weights != "int4") {
    throw UsageError("weight_group applies to weights int4 only");
  }
  out.weight_group = weights == "int4" ? out.weight_group : 0;
  out.weights = "auto";
  if (weights.empty()) return;
  if (out.task != Task::kInfer) {
    throw UsageError("weights '" + weights +
                     "' applies to gpubench infer; training holds its weights in the precision's "
                     "dtype (--precision)");
  }
  const ModelCapabilities& can = info.capabilities;
  const bool declared = layers::is_integer_format(weights)
                            ? can.holds_weights_in(weights)
                            : weights == "mxfp4" || can.holds_integer_weights() || can.experts > 0;
  if (!declared && !quantized) {
    // bf16, fp16, fp8: a precision's name, which such a model takes as --precision.
    throw UsageError("weights '" + weights +
                     "' names a precision, and chooses among weight formats for the models that "
                     "hold others (" +
                     integer_weight_models() + "); " + info.name +
                     " holds the precision's: use --precision " + weights);
  }
  if (!declared) {
    throw UsageError("weights '" + weights + "' applies to the models that hold integer weights (" +
                     integer_weight_models() + "); " + info.name +
                     " holds the precision's (--precision)");
  }
  const std::string precision = quantized ? "bf16" : weights;
  if (request.precision && to_string(*request.precision) != precision) {
    throw UsageError("weights '" + weights + "' " +
                     (quantized ? "computes in bf16" : "is precision " + weights + "'s") +
                     ": precision '" + to_string(*request.precision) +
                     "' does not go with it (use --precision " + precision + " or leave it out)");
  }
  out.precision = parse_precision(precision);
  if (!quantized) return;
  if (weights == "mxfp4") {
    check_mxfp4_slices(info, out);
    out.weights = weights;
    return;
  }
  if (weights == "int4" && !integer_weights::is_int4_group(out.weight_group)) {
    throw UsageError("weight_group must be 32, 64 or 128, got " + std::to_string(out.weight_group));
  }
  // The LibTorch before the model's shapes: no option of the command fixes it (fit stands in for
  // it and checks the shapes itself, launcher/prediction_subject.cpp).
  if (!compat::kHasIntWeights) {
    throw Unavailable(requirement::kLibtorchIntWeights,
                      "weights " + weights + " needs LibTorch " +
                          std::string(compat::kIntWeightsMinimumLibtorch) +
                          " or later (its int8/int4 matmul kernels); this gpubench is built with "
                          "LibTorch " +
                          compat::libtorch_version());
  }
  if (weights == "int4") check_int4_shapes(info, out);
  out.weights = weights;
}

void check_int4_kernel(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const MachineFacts& machine = inputs.machine;
  if (out.weights == "int4" && out.device == DeviceKind::kCuda &&
      machine.cuda_compute_capability < kInt4ComputeCapability) {
    throw Unavailable(requirement::kInt4Kernel,
                      "weights int4 needs compute capability 8.0 or later on CUDA (LibTorch's "
                      "int4 kernel); " +
                          machine.cuda_device_name + " has " +
                          compute_capability_text(machine.cuda_compute_capability));
  }
}

void check_declared_format(const ResolveInputs& inputs, ResolvedBenchmark& out) {
  const ModelInfo& info = inputs.model;
  if (out.task != Task::kInfer) return;
  const bool integer = layers::is_integer_format(out.weights) || out.weights == "mxfp4";
  const std::string format = integer                             ? out.weights
                             : out.precision == Precision::kTf32 ? "fp32"
                                                                 : to_string(out.precision);
  if (!info.capabilities.holds_weights_in(format)) {
    throw UsageError("infer with precision '" + to_string(out.precision) + "' holds " + info.name +
                     "'s weights in " + format +
                     ", which it does not declare; it "
                     "holds " +
                     join(info.capabilities.held_weight_formats()));
  }
}

}  // namespace gpubench::weights
