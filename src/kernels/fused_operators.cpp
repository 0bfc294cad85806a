#include "kernels/fused_operators.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <type_traits>
#include <utility>

#include "kernels/fused_compositions.h"

#ifndef GPUBENCH_WITH_CUDA_KERNELS
#define GPUBENCH_WITH_CUDA_KERNELS 0
#endif

namespace gpubench::kernels {

using composition::add_rms_norm_composition;
using composition::decode_attention_composition;
using composition::fp8_weight_linear_composition;
using composition::int8_weight_linear_composition;
using composition::quantize_fp8_composition;
using composition::rms_norm_composition;
using composition::rotary_cache_write_composition;
using composition::silu_mul_composition;

namespace {

// Autograd would record this call: the kernels have no backward, the composition has.
bool records_gradients(std::initializer_list<const at::Tensor*> tensors) {
  if (!torch::GradMode::is_enabled()) return false;
  for (const at::Tensor* t : tensors) {
    if (t->requires_grad()) return true;
  }
  return false;
}

// The operator `name` called through the dispatcher (the composition on the CPU, the kernel on
// CUDA), or its `composition` directly where autograd would record the call. The operator's
// signature is the composition's.
template <auto composition, typename... Args>
auto call_operator(const char* name, bool autograd_records, Args&&... args) {
  if (autograd_records) return composition(std::forward<Args>(args)...);
  using Signature = std::remove_pointer_t<decltype(composition)>;
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
  return op.call(std::forward<Args>(args)...);
}

}  // namespace

TORCH_LIBRARY(gpubench, m) {
  m.def("rms_norm(Tensor x, Tensor weight, float eps, bool weight_before_rounding) -> Tensor");
  m.def(
      "add_rms_norm(Tensor x, Tensor addend, Tensor weight, float eps, "
      "bool weight_before_rounding) -> (Tensor, Tensor)");
  m.def("silu_mul(Tensor gate, Tensor up) -> Tensor");
  m.def(
      "rotary_cache_write(Tensor q, Tensor k, Tensor v, Tensor cos, Tensor signed_sin, "
      "Tensor(a!) keys, Tensor(b!) values, Tensor position) -> Tensor");
  m.def(
      "decode_attention(Tensor q, Tensor keys, Tensor values, Tensor position, float scale, "
      "Tensor? sinks=None) -> Tensor");
  m.def("fp8_weight_linear(Tensor x, Tensor codes, Tensor scale) -> Tensor");
  m.def("int8_weight_linear(Tensor x, Tensor codes, Tensor scales) -> Tensor");
  m.def(
      "quantize_fp8(Tensor x, ScalarType format, int[] along, float largest) -> (Tensor, "
      "Tensor)");
}

TORCH_LIBRARY_IMPL(gpubench, CompositeImplicitAutograd, m) {
  m.impl("rms_norm", &rms_norm_composition);
  m.impl("add_rms_norm", &add_rms_norm_composition);
  m.impl("silu_mul", &silu_mul_composition);
  m.impl("rotary_cache_write", &rotary_cache_write_composition);
  m.impl("decode_attention", &decode_attention_composition);
  m.impl("fp8_weight_linear", &fp8_weight_linear_composition);
  m.impl("int8_weight_linear", &int8_weight_linear_composition);
  m.impl("quantize_fp8", &quantize_fp8_composition);
}

#if GPUBENCH_WITH_CUDA_KERNELS
bool cuda_kernels_linked();  // kernels/cuda/fused_operators.cu
#endif

bool has_cuda_kernels() {
#if GPUBENCH_WITH_CUDA_KERNELS
  return cuda_kernels_linked();
#else
  return false;
#endif
}

const std::vector<OwnOperator>& own_operators() {
  // decode_attention: a kernel for each split of the cache, and one that joins the splits.
  static const std::vector<OwnOperator> operators = {{"gpubench::rms_norm"},
                                                     {"gpubench::add_rms_norm"},
                                                     {"gpubench::silu_mul"},
                                                     {"gpubench::rotary_cache_write"},
                                                     {"gpubench::decode_attention", 2},
                                                     {"gpubench::fp8_weight_linear"},
                                                     {"gpubench::int8_weight_linear"},
                                                     // the blocks' amaxes, then the cast
                                                     {"gpubench::quantize_fp8", 2}};
  return operators;
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                       RmsWeight order) {
  return call_operator<&rms_norm_composition>("gpubench::rms_norm",
                                              records_gradients({&x, &weight}), x, weight, eps,
                                              order == RmsWeight::kBeforeRounding);
}

std::pair<torch::Tensor, torch::Tensor> add_rms_norm(const torch::Tensor& x,
                                                     const torch::Tensor& addend,
                                                     const torch::Tensor& weight, double eps,
                                                     RmsWeight order) {
  auto [sum, normed] = call_operator<&add_rms_norm_composition>(
      "gpubench::add_rms_norm", records_gradients({&x, &addend, &weight}), x, addend, weight, eps,
      order == RmsWeight::kBeforeRounding);
  return {std::move(sum), std::move(normed)};
}

torch::Tensor silu_mul(const torch::Tensor& gate, const torch::Tensor& up) {
  return call_operator<&silu_mul_composition>("gpubench::silu_mul", records_gradients({&gate, &up}),
                                              gate, up);
}

torch::Tensor rotary_cache_write(const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v, const torch::Tensor& cos,
                                 const torch::Tensor& signed_sin, torch::Tensor& keys,
                                 torch::Tensor& values, const torch::Tensor& position) {
  return call_operator<&rotary_cache_write_composition>("gpubench::rotary_cache_write",
                                                        records_gradients({&q, &k, &v}), q, k, v,
                                                        cos, signed_sin, keys, values, position);
}

torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& keys,
                               const torch::Tensor& values, const torch::Tensor& position,
                               double scale, const torch::Tensor& sinks) {
  const c10::optional<at::Tensor> sink_logits =
      sinks.defined() ? c10::optional<at::Tensor>(sinks) : c10::nullopt;
  return call_operator<&decode_attention_composition>("gpubench::decode_attention",
                                                      records_gradients({&q, &keys, &values}), q,
                                                      keys, values, position, scale, sink_logits);
}

bool decode_attention_converts_cache(torch::Device device, torch::ScalarType cache,
                                     torch::ScalarType compute, int64_t head_dim, int64_t group) {
  const bool reads_stored =
      device.is_cuda() && has_cuda_kernels() && decode_attention_kernel_takes(head_dim, group);
  return cache != compute && !reads_stored;
}

torch::Tensor fp8_weight_linear(const torch::Tensor& x, const torch::Tensor& codes,
                                const torch::Tensor& scale) {
  return call_operator<&fp8_weight_linear_composition>("gpubench::fp8_weight_linear",
                                                       records_gradients({&x}), x, codes, scale);
}

torch::Tensor int8_weight_linear(const torch::Tensor& x, const torch::Tensor& codes,
                                 const torch::Tensor& scales) {
  return call_operator<&int8_weight_linear_composition>("gpubench::int8_weight_linear",
                                                        records_gradients({&x}), x, codes, scales);
}

std::pair<torch::Tensor, torch::Tensor> quantize_fp8(const torch::Tensor& x,
                                                     torch::ScalarType format,
                                                     std::vector<int64_t> along, double largest) {
  auto [data, scale] =
      call_operator<&quantize_fp8_composition>("gpubench::quantize_fp8", records_gradients({&x}), x,
                                               format, at::IntArrayRef(along), largest);
  return {std::move(data), std::move(scale)};
}

}  // namespace gpubench::kernels
