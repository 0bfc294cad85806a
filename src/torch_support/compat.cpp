#include "torch_support/compat.h"

#include <cctype>
#include <cstring>

#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>

#include <cmath>
#if GPUBENCH_TORCH_AT_LEAST(2, 7)
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

namespace gpubench::compat {

#if GPUBENCH_TORCH_AT_LEAST(2, 4)

bool autocast_enabled(c10::DeviceType device) {
  return at::autocast::is_autocast_enabled(device);
}

void set_autocast_enabled(c10::DeviceType device, bool enabled) {
  at::autocast::set_autocast_enabled(device, enabled);
}

void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(device, dtype);
}

at::ScalarType autocast_dtype(c10::DeviceType device) {
  return at::autocast::get_autocast_dtype(device);
}

#else

bool autocast_enabled(c10::DeviceType device) {
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled()
                                        : at::autocast::is_enabled();
}

void set_autocast_enabled(c10::DeviceType device, bool enabled) {
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_enabled(enabled);
  }
}

void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
}

at::ScalarType autocast_dtype(c10::DeviceType device) {
  return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                        : at::autocast::get_autocast_gpu_dtype();
}

#endif

at::Tensor scaled_dot_product_attention(const at::Tensor& q, const at::Tensor& k,
                                        const at::Tensor& v, double dropout, bool causal) {
#if GPUBENCH_TORCH_AT_LEAST(2, 0)
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, dropout, causal);
#else
  at::Tensor scores =
      at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (causal) {
    const at::Tensor future =
        at::ones({q.size(-2), k.size(-2)}, q.options().dtype(at::kBool)).triu(1);
    scores = scores.masked_fill(future, -INFINITY);
  }
  at::Tensor weights = at::softmax(scores, -1);
  if (dropout > 0) weights = at::dropout(weights, dropout, /*train=*/true);
  return at::matmul(weights, v);
#endif
}

int64_t scaled_dot_product_attention_score_bytes(int64_t batch, int64_t heads, int64_t tokens,
                                                 int64_t keys, int64_t head_dim,
                                                 int64_t element_bytes) {
  if (kHasFusedAttention) return 0;
  const int64_t scores = batch * heads * tokens * keys * element_bytes;
  return 2 * scores + tokens * keys + batch * heads * tokens * head_dim * element_bytes;
}

at::Tensor rms_norm(const at::Tensor& x, double eps, const std::optional<at::Tensor>& weight) {
#if GPUBENCH_TORCH_AT_LEAST(2, 4)
  if (!autocast_enabled(x.device().type())) return at::rms_norm(x, {x.size(-1)}, weight, eps);
#endif
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor normed = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (weight ? normed * *weight : normed).to(x.scalar_type());
}

void set_tf32(bool matmul, bool cudnn) {
  at::globalContext().setAllowTF32CuBLAS(matmul);
  at::globalContext().setAllowTF32CuDNN(cudnn);
}

bool tf32_matmul_enabled() {
  return at::globalContext().allowTF32CuBLAS();
}

bool tf32_cudnn_enabled() {
  return at::globalContext().allowTF32CuDNN();
}

std::string out_of_memory_cause_of_message(const std::string& what, bool near_limit) {
  // The allocators' own words: c10's caching allocator and CUDA ("CUDA out of memory", "CUDA
  // error: out of memory"), LibTorch's CPU allocator ("DefaultCPUAllocator: not enough memory",
  // and where the host itself refused, "[enforce fail at alloc_cpu.cpp:..] ... can't allocate
  // memory").
  for (const char* words : {"out of memory", "not enough memory", "can't allocate memory"}) {
    if (what.find(words) != std::string::npos) return words;
  }
  // A library that could not allocate its workspace says so in its status name:
  // CUBLAS_STATUS_ALLOC_FAILED, CUDNN_STATUS_ALLOC_FAILED, CUSOLVER_STATUS_ALLOC_FAILED,
  // CUSPARSE_STATUS_ALLOC_FAILED, CUFFT_ALLOC_FAILED.
  const size_t failed = what.find("_ALLOC_FAILED");
  if (failed != std::string::npos) {
    size_t start = failed;
    while (start > 0 && (std::isupper(static_cast<unsigned char>(what[start - 1])) != 0 ||
                         what[start - 1] == '_')) {
      --start;
    }
    return what.substr(start, failed + std::strlen("_ALLOC_FAILED") - start);
  }
  // cuDNN reports a workspace it could not allocate as an internal error, or as no engine that
  // can run the convolution: an allocation failure only when memory was at its limit.
  if (near_limit) {
    for (const char* words : {"CUDNN_STATUS_INTERNAL_ERROR", "unable to find an engine"}) {
      if (what.find(words) != std::string::npos) {
        return std::string(words) + " at the memory limit (a workspace allocation failed)";
      }
    }
  }
  return "";
}

std::string out_of_memory_cause(const std::exception& error, bool near_limit) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr) {
    return "the caching allocator (c10::OutOfMemoryError)";
  }
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr)
    return "operator new (std::bad_alloc)";
  return out_of_memory_cause_of_message(error.what(), near_limit);
}

void shutdown_collective_backend([[maybe_unused]] CollectiveBackend& backend) {
#if GPUBENCH_TORCH_AT_LEAST(2, 7)
  backend.shutdown();
#endif
}

void fused_sgd_([[maybe_unused]] at::TensorList params, [[maybe_unused]] at::TensorList grads,
                [[maybe_unused]] at::TensorList momentum_buffers,
                [[maybe_unused]] double weight_decay, [[maybe_unused]] double momentum,
                [[maybe_unused]] double lr, [[maybe_unused]] double dampening,
                [[maybe_unused]] bool nesterov, [[maybe_unused]] bool is_first_step,
                [[maybe_unused]] const std::optional<at::Tensor>& found_inf) {
#if GPUBENCH_TORCH_AT_LEAST(2, 4) && GPUBENCH_WITH_CUDA
  at::_fused_sgd_(params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov,
                  /*maximize=*/false, is_first_step, /*grad_scale=*/std::nullopt, found_inf);
#else
  TORCH_CHECK(false, "this LibTorch has no fused SGD");
#endif
}

bool fused_adamw_available([[maybe_unused]] const c10::Device& device) {
#if GPUBENCH_TORCH_AT_LEAST(2, 4)
  return device.is_cpu() || (device.is_cuda() && GPUBENCH_WITH_CUDA);
#else
  return false;
#endif
}

void fused_adamw_([[maybe_unused]] at::TensorList params, [[maybe_unused]] at::TensorList grads,
                  [[maybe_unused]] at::TensorList exp_avgs,
                  [[maybe_unused]] at::TensorList exp_avg_sqs,
                  [[maybe_unused]] at::TensorList state_steps, [[maybe_unused]] double lr,
                  [[maybe_unused]] double beta1, [[maybe_unused]] double beta2,
                  [[maybe_unused]] double weight_decay, [[maybe_unused]] double eps,
                  [[maybe_unused]] const std::optional<at::Tensor>& found_inf) {
#if GPUBENCH_TORCH_AT_LEAST(2, 4)
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, state_steps, lr,
                    beta1, beta2, weight_decay, eps, /*amsgrad=*/false, /*maximize=*/false,
                    /*grad_scale=*/std::nullopt, found_inf);
#else
  TORCH_CHECK(false, "this LibTorch has no fused AdamW");
#endif
}

#if !GPUBENCH_TORCH_AT_LEAST(2, 5)
namespace {
[[noreturn]] void no_fp8() {
  throw std::runtime_error("FP8 needs LibTorch " + std::string(kFp8MinimumLibtorch) +
                           " or later; this gpubench is built with LibTorch " + libtorch_version());
}
}  // namespace
#endif

at::ScalarType float8_e4m3() {
#if GPUBENCH_TORCH_AT_LEAST(2, 5)
  return at::kFloat8_e4m3fn;
#else
  no_fp8();
#endif
}

at::ScalarType float8_e5m2() {
#if GPUBENCH_TORCH_AT_LEAST(2, 5)
  return at::kFloat8_e5m2;
#else
  no_fp8();
#endif
}

at::Tensor scaled_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                     const at::Tensor& scale_b, at::ScalarType out_dtype, bool use_fast_accum) {
#if GPUBENCH_TORCH_AT_LEAST(2, 5)
  const bool per_tensor = scale_a.numel() == 1 && scale_b.numel() == 1;
  if (a.is_cuda() || per_tensor) {
    return at::_scaled_mm(a, b, scale_a, scale_b, std::nullopt, std::nullopt, out_dtype,
                          use_fast_accum);
  }
  const at::Tensor one = at::ones({}, scale_a.options());
  return (at::_scaled_mm(a, b, one, one, std::nullopt, std::nullopt, at::kFloat, false) * scale_a *
          scale_b)
      .to(out_dtype);
#else
  (void)a, (void)b, (void)scale_a, (void)scale_b, (void)out_dtype, (void)use_fast_accum;
  no_fp8();
#endif
}

bool scaled_mm_runs_on_cpu() {
  static const bool runs = [] {
    if (!kHasFp8) return false;
    try {
      const at::Tensor one = at::ones({});
      const at::Tensor a = at::ones({16, 16}).to(float8_e4m3());
      scaled_mm(a, a.t(), one, one, at::kBFloat16, false);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }();
  return runs;
}

#if !GPUBENCH_TORCH_AT_LEAST(2, 6)
namespace {
[[noreturn]] void no_int_weights() {
  throw std::logic_error("integer weights need LibTorch " +
                         std::string(kIntWeightsMinimumLibtorch) + "+; resolve refuses them first");
}
}  // namespace
#endif

at::Tensor pack_int4_weight(const at::Tensor& codes, int64_t inner_k_tiles) {
#if GPUBENCH_TORCH_AT_LEAST(2, 6)
  if (codes.is_cuda()) {
    // CUDA's packing reads two codes a byte, the even column in the high nibble.
    const at::Tensor pairs =
        codes.slice(1, 0, {}, 2).bitwise_left_shift(4).bitwise_or(codes.slice(1, 1, {}, 2));
    return at::_convert_weight_to_int4pack(pairs.to(at::kByte), inner_k_tiles);
  }
  return at::_convert_weight_to_int4pack_for_cpu(codes.to(at::kInt).contiguous(), inner_k_tiles);
#else
  (void)codes, (void)inner_k_tiles;
  no_int_weights();
#endif
}

at::Tensor int4_weight_mm(const at::Tensor& x, const at::Tensor& packed, int64_t group,
                          const at::Tensor& scales_and_zeros) {
#if GPUBENCH_TORCH_AT_LEAST(2, 6)
  if (x.is_cuda()) return at::_weight_int4pack_mm(x, packed, group, scales_and_zeros);
  return at::_weight_int4pack_mm_for_cpu(x, packed, group, scales_and_zeros);
#else
  (void)x, (void)packed, (void)group, (void)scales_and_zeros;
  no_int_weights();
#endif
}

at::Tensor int8_weight_mm(const at::Tensor& x, const at::Tensor& codes, const at::Tensor& scales) {
#if GPUBENCH_TORCH_AT_LEAST(2, 6)
  return at::_weight_int8pack_mm(x, codes, scales);
#else
  (void)x, (void)codes, (void)scales;
  no_int_weights();
#endif
}

std::string libtorch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

void release_storage(const at::Tensor& tensor) {
  c10::StorageImpl* storage = tensor.storage().unsafeGetStorageImpl();
  storage->set_data_ptr_noswap(at::DataPtr(nullptr, tensor.device()));
  storage->set_nbytes(0);
}

void reserve_storage(const at::Tensor& tensor) {
  c10::StorageImpl* storage = tensor.storage().unsafeGetStorageImpl();
  const size_t bytes = static_cast<size_t>(tensor.numel()) * tensor.element_size();
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
}

}  // namespace gpubench::compat
